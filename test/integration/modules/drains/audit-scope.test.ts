/**
 * The drain audit route reads drain entries only, although the organization's audit log holds every
 * family's (workflow starts, cancels and recovery notes, SIP trunks, persona versions): pages are
 * full and the cursor goes on past the other entries. And erasing a workflow run removes the text
 * its users wrote into its audit entries (retry and resolve notes, a cancel's reason); the entries
 * stay (contract W8).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { startApp, waitFor, type TestApp } from '../../../helpers/app.js';
import { WF_BASE, writeWorkflowsSeed } from '../../../helpers/workflows-seed.js';

const AUDIT = '/admin/orgs/org_acme/log-drains-audit';
const DRAINS = '/admin/orgs/org_acme/log-drains';
const LOGS = 'lk_wf_none'; // logs:manage

/** The workflow suites' seed, with keys for the other families' writes. */
function seed(): string {
  const path = writeWorkflowsSeed();
  const s = JSON.parse(readFileSync(path, 'utf8'));
  const key = (k: string, scopes: string[]) => ({ key: k, ownerId: 'usr_ann', orgId: 'org_acme', scopes, agentGrants: [], status: 'active' });
  s.apiKeys.push(
    key('lk_tel', ['telephony:read', 'telephony:write', 'telephony:manage', 'telephony:provision']),
    key('lk_agents', ['agents:*']),
    key('lk_channels', ['channels:send']),
  );
  writeFileSync(path, JSON.stringify(s));
  return path;
}

describe('the drain audit route among every family\'s audit entries', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({
      SEED_FILE: seed(), DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost',
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const ok = async (res: Promise<{ status: number; body: any }>, status: number) => {
    const r = await res;
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    return r.body;
  };
  const start = async (workflowName: string) =>
    (await ok(app.request('POST', `${WF_BASE}/runs`, { token: 'sess_ann', body: { workflowName } }), 202)).runId as string;
  const run = async (runId: string) => (await app.request('GET', `${WF_BASE}/runs/${runId}?fields=full`, { token: 'sess_ann' })).body;
  const until = (runId: string, what: string, done: (r: any) => boolean) =>
    waitFor(async () => {
      const r = await run(runId);
      return done(r) ? r : undefined;
    }, { what: `run ${runId} ${what}` });
  const parked = (runId: string) => until(runId, 'parked', (r) => r.status === 'suspended' && r.gate?.kind === 'exception');
  const terminal = (runId: string) => until(runId, 'terminal', (r) => ['completed', 'failed', 'cancelled', 'timed_out'].includes(r.status));
  const post = (path: string, body: unknown, token = 'sess_ann') => app.request('POST', `${WF_BASE}/runs/${path}`, { token, body });
  const auditText = async () => JSON.stringify(await app.store.sql.query("select action, details from audit_log where org_id = 'org_acme'"));

  it('answers drain entries only, a full page at a time, whatever else the organization wrote', async () => {
    const drain = await ok(app.request('POST', DRAINS, { token: LOGS, body: { name: 'audited', type: 'http', endpoint: 'https://localhost:9/in' } }), 201);
    // Every family writes in between and after.
    const runId = await start('slow');
    await ok(post(`${runId}/cancel`, { reason: 'not needed' }, 'lk_wf_all'), 200);
    await ok(app.request('POST', '/developer/orgs/org_acme/sip-trunks', { token: 'lk_tel', body: { acl: ['203.0.113.0/24'] } }), 201);
    await ok(app.request('POST', '/developer/agents/agt_support/persona/version', { token: 'lk_agents', body: { persona: 'You are the support bot.' } }), 201);
    await ok(app.request('POST', '/developer/agents/agt_support/channels/send', { token: 'lk_channels', body: { channel: 'sms', to: { phoneNumber: '+15550001501' }, text: 'x' } }), 200);
    await ok(app.request('POST', `${DRAINS}/${drain.id}/pause`, { token: LOGS, body: { reason: 'maintenance' } }), 200);
    const flaky = await start('flaky');
    await parked(flaky);
    await ok(post(`${flaky}/steps/try/retry`, { note: 'upstream is back' }, 'lk_wf_exec'), 200);
    await ok(app.request('POST', '/developer/orgs/org_acme/sip-trunks', { token: 'lk_tel', body: { acl: ['198.51.100.0/24'] } }), 201);

    const kinds = (await app.store.sql.query<{ target_type: string }>("select distinct target_type from audit_log where org_id = 'org_acme' order by 1")).map((r) => r.target_type);
    expect(kinds).toEqual(expect.arrayContaining(['agent', 'log_drain', 'sip_trunk', 'workflow_run']));

    const all = await ok(app.request('GET', `${AUDIT}?limit=100`, { token: LOGS }), 200);
    expect(all.entries.map((e: any) => [e.action, e.drainId])).toEqual([['logs.drain.paused', drain.id], ['logs.drain.created', drain.id]]);
    expect(all.nextCursor).toBeNull();
    // One entry a page: each page holds the next drain entry, and the last says there is no more.
    const first = await ok(app.request('GET', `${AUDIT}?limit=1`, { token: LOGS }), 200);
    expect(first.entries.map((e: any) => e.action)).toEqual(['logs.drain.paused']);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await ok(app.request('GET', `${AUDIT}?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`, { token: LOGS }), 200);
    expect(second.entries.map((e: any) => e.action)).toEqual(['logs.drain.created']);
    expect(second.nextCursor).toBeNull();
    // Another family's target id names no drain.
    expect((await ok(app.request('GET', `${AUDIT}?drainId=${flaky}`, { token: LOGS }), 200)).entries).toEqual([]);
  });

  it('takes the notes and reasons of an erased run out of its audit entries, which stay', async () => {
    const retried = await start('flaky');
    await parked(retried);
    await ok(post(`${retried}/steps/try/retry`, { note: 'note-of-the-retry' }, 'lk_wf_exec'), 200);
    const resolved = await start('flaky');
    await parked(resolved);
    await ok(post(`${resolved}/steps/try/resolve`, { outcome: 'skip', note: 'note-of-the-resolve' }), 200);
    const cancelled = await start('slow');
    await ok(post(`${cancelled}/cancel`, { reason: 'reason-of-the-cancel' }, 'lk_wf_all'), 200);
    const kept = await start('flaky');
    await parked(kept);
    await ok(post(`${kept}/steps/try/retry`, { note: 'note-of-a-kept-run' }, 'lk_wf_exec'), 200);
    for (const id of [retried, resolved, cancelled, kept]) await terminal(id);

    const before = await auditText();
    for (const text of ['note-of-the-retry', 'note-of-the-resolve', 'reason-of-the-cancel']) expect(before).toContain(text);
    for (const id of [retried, resolved, cancelled]) await ok(app.request('DELETE', `${WF_BASE}/runs/${id}`, { token: 'sess_ann' }), 202);

    const after = await auditText();
    for (const text of ['note-of-the-retry', 'note-of-the-resolve', 'reason-of-the-cancel']) expect(after).not.toContain(text);
    // A run not erased keeps its note.
    expect(after).toContain('note-of-a-kept-run');
    const actions = async (id: string) =>
      (await app.store.sql.query<{ action: string }>('select action from audit_log where target_id = $1 order by at, id', [id])).map((r) => r.action);
    expect(await actions(retried)).toEqual(['workflows.run.started', 'workflows.step.retried', 'workflows.run.erased']);
    expect(await actions(resolved)).toEqual(['workflows.run.started', 'workflows.step.resolved', 'workflows.run.erased']);
    expect(await actions(cancelled)).toEqual(expect.arrayContaining(['workflows.run.started', 'workflows.run.cancelled', 'workflows.run.erased']));
    const [retry] = await app.store.sql.query<{ details: Record<string, unknown> }>("select details from audit_log where target_id = $1 and action = 'workflows.step.retried'", [retried]);
    expect(retry!.details).toEqual({ stepId: 'try', toAttempt: 3, resetRetries: false });
  });
});
