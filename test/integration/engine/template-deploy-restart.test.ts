/**
 * A template deploy survives its API process (spec 03 part 4.4; docs/api-templates.md, deploy): a
 * real `logdrain start` mints a deploy and is killed (SIGKILL) while the deploy is held before its
 * install (the TEMPLATE_DEPLOY_HOLD test hook); a new process takes the deploy over once the dead
 * one's lease ran out and finishes it. The poll route reaches `succeeded`, the key's retry answers
 * the one deploy, and the organization holds one minted agent, never two.
 *
 * Both modes (vitest.config.ts): the embedded store in a data directory the two processes share in
 * turn, or Postgres and the librdkafka mock broker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_MODE, waitFor } from '../../helpers/app.js';
import { processModes } from '../../helpers/process-modes.js';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';
import { freePort } from '../../helpers/poller.js';

const SEED = new URL('../../fixtures/seed-templates-deploy.json', import.meta.url).pathname;
const TEMPLATES = '/marketplace/templates';

describe(`template deploy across a killed process (${TEST_MODE})`, () => {
  const modes = processModes('tpl-deploy-restart');
  const dataDir = mkdtempSync(join(tmpdir(), 'tpl-deploy-'));
  const spawned: LogdrainProcess[] = [];
  afterAll(async () => {
    for (const p of spawned) p.kill('SIGKILL');
    await Promise.all(spawned.map((p) => p.exited));
    rmSync(dataDir, { recursive: true, force: true });
  });

  function start(port: number, extra: Record<string, string>): LogdrainProcess {
    const env = { ...modes.envFor(port), SEED_FILE: SEED, TEMPLATE_DEPLOY_LEASE_MS: '1500', TEMPLATE_DEPLOY_POLL_MS: '100', ...extra };
    const p = spawnLogdrain(['start'], TEST_MODE === 'kafka-postgres' ? env : { ...env, DATA_DIR: dataDir });
    spawned.push(p);
    return p;
  }

  const client = (port: number) => async (method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${opts.token ?? 'sess_ann'}`, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(opts.headers ?? {}) },
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const ready = (port: number) => waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200, { timeoutMs: 120_000, what: 'the API ready' });

  it('finishes a deploy its killed process left, with one agent', async () => {
    const port1 = await freePort();
    // The answer window is short so the held deploy answers 202 at once.
    const first = start(port1, { TEMPLATE_DEPLOY_HOLD: 'true', TEMPLATE_DEPLOY_ANSWER_WAIT_MS: '200' });
    await ready(port1);
    const api1 = client(port1);
    const tpl = await api1('POST', TEMPLATES, { body: { sourceAgentId: 'agt_base', name: 'restart', displayName: 'Restart', visibility: 'private' } });
    expect(tpl.status, JSON.stringify(tpl.body)).toBe(201);
    expect((await api1('POST', `${TEMPLATES}/${tpl.body.id}/versions`, { body: {} })).status).toBe(201);
    const agentsBefore = (await api1('GET', `/templates/${tpl.body.id}/eligible-targets`)).body as { agentId: string }[];

    const key = `restart-${randomBytes(8).toString('hex')}`;
    const deployed = await api1('POST', `${TEMPLATES}/${tpl.body.id}/deploy`, { body: {}, headers: { 'idempotency-key': key } });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(202);
    const { deployId } = deployed.body as { deployId: string };
    // Mid-deploy: the agent is minted and the job holds the deploy before its install.
    await first.waitForEvent('templates.deploy.held', 30_000, (l) => l.deployId === deployId);
    const polled = await api1('GET', `${TEMPLATES}/deploys/${deployId}`);
    expect(polled.body).toMatchObject({ deployId, status: 'running', stage: 'install' });
    const minted = ((await api1('GET', `/templates/${tpl.body.id}/eligible-targets`)).body as { agentId: string }[]).filter((a) => !agentsBefore.some((b) => b.agentId === a.agentId));
    expect(minted).toHaveLength(1);

    first.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const port2 = await freePort();
    const second = start(port2, {});
    await ready(port2);
    const api2 = client(port2);
    const done = await waitFor(async () => {
      const r = await api2('GET', `${TEMPLATES}/deploys/${deployId}`);
      return r.body?.status === 'succeeded' || r.body?.status === 'failed' ? r.body : undefined;
    }, { timeoutMs: 30_000, what: 'the deploy to end on the new process' });
    expect(done).toMatchObject({ deployId, status: 'succeeded', result: { agentId: minted[0]!.agentId, orgId: 'org_acme' } });
    await second.waitForEvent('templates.deploy.succeeded', 5_000, (l) => l.deployId === deployId);

    // The retry answers the first answer, and nothing more is minted.
    const retry = await api2('POST', `${TEMPLATES}/${tpl.body.id}/deploy`, { body: {}, headers: { 'idempotency-key': key } });
    expect(retry).toEqual({ status: 202, body: { deployId } });
    const agentsAfter = (await api2('GET', `/templates/${tpl.body.id}/eligible-targets`)).body as { agentId: string }[];
    expect(agentsAfter).toHaveLength(agentsBefore.length + 1);
  }, 300_000);
});
