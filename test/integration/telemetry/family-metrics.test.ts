/**
 * The route families' metrics (docs/operations.md, Metrics): a workflow run, a channel send and its
 * receipt, voice dispatches and sessions, and skill installs driven through the API move their
 * counters in /metrics by exactly what they did; the run gauges follow the store; no label value
 * is an id, an address or text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, waitFor, type TestApp } from '../../helpers/app.js';
import { WF_BASE, writeWorkflowsSeed } from '../../helpers/workflows-seed.js';
import { writeChannelsSeed } from '../../helpers/channels-seed.js';
import { listSkill, publish, SKILLS_SEED } from '../../helpers/skills.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

const FAMILY_METRIC = /^logdrain_(workflow|channel|telephony|voice|skill)_/;

/** The value of one series (0 when absent), matching every label given. */
const value = (samples: Sample[], name: string, where: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

/** The families' series, with the value each moved by between two scrapes (series that did not move left out). */
function moved(before: Sample[], after: Sample[]): Record<string, number> {
  const key = (s: Sample) => `${s.name}{${Object.entries(s.labels).filter(([k]) => k !== 'role').map(([k, v]) => `${k}=${v}`).sort().join(',')}}`;
  const was = new Map(before.filter((s) => FAMILY_METRIC.test(s.name)).map((s) => [key(s), s.value]));
  const out: Record<string, number> = {};
  for (const s of after) {
    if (!FAMILY_METRIC.test(s.name) || s.name.endsWith('_bucket') || /_workflow_(runs|queue_)/.test(s.name)) continue;
    const d = s.value - (was.get(key(s)) ?? 0);
    if (d !== 0) out[key(s)] = Number(d.toFixed(6));
  }
  return out;
}

/** Every label of the families' series is a bounded word: none of `ids`, no digit run, address or text. */
function expectBoundedLabels(samples: Sample[], ids: string[]): void {
  const families = samples.filter((s) => FAMILY_METRIC.test(s.name));
  expect(families.length).toBeGreaterThan(0);
  for (const s of families) {
    for (const [k, v] of Object.entries(s.labels)) {
      if (k === 'le' || k === 'role') continue;
      expect(v, `${s.name} ${k}`).toMatch(/^[a-z][a-z_]*$/);
      for (const id of ids) expect(v.includes(id.toLowerCase()), `${s.name} ${k}=${v} carries ${id}`).toBe(false);
    }
  }
}

const scrapeOf = (app: TestApp) => async () => parseExposition(await (await fetch(`${app.base}/metrics`)).text());

describe('workflow metrics', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ SEED_FILE: writeWorkflowsSeed(), WORKFLOW_POLL_MS: '50' });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('count step attempts and failures, the claim, the run-end notification; the run gauges follow the store', async () => {
    const scrape = scrapeOf(app);
    const before = await scrape();
    for (const status of ['queued', 'gated', 'running', 'suspended']) expect(before.some((s) => s.name === 'logdrain_workflow_runs' && s.labels.status === status)).toBe(true);
    const claimsBefore = value(before, 'logdrain_workflow_claim_latency_seconds_count');
    const report = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { workflowName: 'nightly-report', input: { day: 'mon' }, notifyMode: 'email' } });
    expect(report.status, JSON.stringify(report.body)).toBe(202);
    // Fails twice with one retry: parks the run (suspended) after two failed attempts.
    const flaky = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { workflowName: 'flaky', notifyMode: 'off' } });
    expect(flaky.status, JSON.stringify(flaky.body)).toBe(202);
    const runIds = [report.body.runId as string, flaky.body.runId as string];

    const detail = async (id: string) => (await app.request('GET', `${WF_BASE}/runs/${id}`, { token: 'lk_wf_all' })).body;
    await waitFor(async () => (await detail(runIds[0]!)).status === 'completed' && (await detail(runIds[1]!)).status === 'suspended', { what: 'both runs settled' });
    const expected = {
      'logdrain_workflow_step_attempts_total{step_kind=noop}': 1,
      'logdrain_workflow_step_attempts_total{step_kind=output}': 1,
      'logdrain_workflow_step_attempts_total{step_kind=fail}': 2,
      'logdrain_workflow_step_failures_total{step_kind=fail}': 2,
      'logdrain_workflow_claim_latency_seconds_count{}': 2,
      'logdrain_workflow_notifications_total{kind=email,outcome=sent}': 1,
    };
    // The notification is sent after the run's end has committed: wait for its count, then check all.
    const after = await waitFor(async () => {
      const s = await scrape();
      return value(s, 'logdrain_workflow_notifications_total', { kind: 'email', outcome: 'sent' }) >= 1 ? s : undefined;
    }, { what: 'the notification counted' });
    const delta = moved(before, after);
    const sumKey = 'logdrain_workflow_claim_latency_seconds_sum{}';
    expect(delta[sumKey]).toBeGreaterThanOrEqual(0);
    delete delta[sumKey];
    expect(delta).toEqual(expected);
    expect(value(after, 'logdrain_workflow_claim_latency_seconds_count') - claimsBefore).toBe(2);

    // The gauges read the store: the parked run is suspended, nothing waits for a claim.
    const gauges = await waitFor(async () => {
      const s = await scrape();
      return value(s, 'logdrain_workflow_runs', { status: 'suspended' }) === 1 ? s : undefined;
    }, { what: 'the suspended run in the gauge' });
    expect(value(gauges, 'logdrain_workflow_runs', { status: 'queued' })).toBe(0);
    expect(value(gauges, 'logdrain_workflow_queue_depth')).toBe(0);
    expect(value(gauges, 'logdrain_workflow_queue_oldest_age_seconds')).toBe(0);
    expectBoundedLabels(after, [...runIds, 'agt_support', 'org_acme', 'usr_ann', 'ann@acme', 'nightly', 'flaky', 'mon']);
  });
});

describe('workflow queue gauges without an executor', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ SEED_FILE: writeWorkflowsSeed(), WORKFLOW_EXECUTOR: 'false' });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('show queued runs, the queue depth and the oldest queued run\'s age', async () => {
    const scrape = scrapeOf(app);
    for (let i = 0; i < 3; i++) {
      expect((await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { workflowName: 'nightly-report', input: { day: 'tue' }, notifyMode: 'off' } })).status).toBe(202);
    }
    // The gauges are read at most once a second: wait out a read from before the starts.
    const s = await waitFor(async () => {
      const x = await scrape();
      return value(x, 'logdrain_workflow_runs', { status: 'queued' }) === 3 ? x : undefined;
    }, { what: 'three queued runs' });
    expect(value(s, 'logdrain_workflow_queue_depth')).toBe(3);
    expect(value(s, 'logdrain_workflow_queue_oldest_age_seconds')).toBeGreaterThan(0);
    expect(value(s, 'logdrain_workflow_queue_oldest_age_seconds')).toBeLessThan(60);
    expect(value(s, 'logdrain_workflow_claim_latency_seconds_count')).toBe(0);
  });
});

describe('channel metrics', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ SEED_FILE: writeChannelsSeed(), CHANNEL_SWEEP_INTERVAL_MS: '0' });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('count a send by channel and status, and a receipt applied once by the status it moved to', async () => {
    const scrape = scrapeOf(app);
    const before = await scrape();
    const sent = await app.request('POST', '/developer/agents/agt_support/channels/send', { token: 'lk_send', body: { channel: 'sms', to: { phoneNumber: '+15550001235' }, text: 'metered hello' } });
    expect(sent.body.status, JSON.stringify(sent.body)).toBe('accepted');
    const receipt = (eventId: string, status: string) =>
      app.request('POST', '/developer/channels/receipts', { token: 'lk_receipts', body: { type: 'status', provider: 'sandbox-sms', eventId, messageId: sent.body.messageId, status } });
    expect((await receipt('evt-m1', 'delivered')).body.status).toBe('delivered');
    // The same event again, and a backward move: neither applies.
    expect((await receipt('evt-m1', 'delivered')).body.duplicate).toBe(true);
    expect((await receipt('evt-m2', 'sent')).body.status).toBe('delivered');
    const after = await scrape();
    expect(moved(before, after)).toEqual({
      'logdrain_channel_sends_total{channel=sms,status=accepted}': 1,
      'logdrain_channel_receipts_applied_total{status=delivered}': 1,
    });
    expectBoundedLabels(after, [sent.body.deliveryId, sent.body.messageId, '15550001235', 'agt_support', 'metered']);
  });
});

describe('telephony metrics', () => {
  const SEED = new URL('../../fixtures/seed-telephony.json', import.meta.url).pathname;
  let app: TestApp;
  let refused: TestApp;
  beforeAll(async () => {
    app = await startApp({ SEED_FILE: SEED }, 'serve');
    // Nothing listens on port 1 of the loopback: the media server is unavailable.
    refused = await startApp({ SEED_FILE: SEED, VOICE_MEDIA_URL: 'http://127.0.0.1:1', VOICE_MEDIA_API_KEY: 'k', VOICE_MEDIA_API_SECRET: 'lk-test-secret-0123456789abcdef0123456789' }, 'serve');
  });
  afterAll(async () => {
    await app?.stop();
    await refused?.stop();
  });

  it('count dispatches by kind and outcome and voice sessions; the vendor errors at 0 from the start', async () => {
    const scrape = scrapeOf(app);
    const before = await scrape();
    for (const port of ['carrier', 'rcs', 'voice_calls', 'media']) {
      expect(before.some((s) => s.name === 'logdrain_telephony_vendor_errors_total' && s.labels.port === port && s.labels.error_class === 'unavailable')).toBe(true);
    }
    expect(before.some((s) => s.name === 'logdrain_telephony_dispatches_total' && s.labels.kind === 'phone' && s.labels.outcome === 'vendor_failed')).toBe(true);
    const voice = await app.request('POST', '/developer/voice-agents/agt_support', { token: 'lk_tel_all', body: { name: 'metered-voice' } });
    expect(voice.status, JSON.stringify(voice.body)).toBe(201);
    const phone = await app.request('POST', '/developer/voice-agents/agt_support/dispatch', { token: 'lk_tel_all', body: { to: '+14155550100' } });
    expect(phone.status, JSON.stringify(phone.body)).toBe(201);
    const web = await app.request('POST', '/developer/voice-agents/agt_support/dispatch', { token: 'lk_tel_all', body: { to: { kind: 'web' } } });
    expect(web.status, JSON.stringify(web.body)).toBe(201);
    const session = await app.request('POST', '/developer/voice/agt_support/session', { token: 'lk_tel_all', body: { userId: 'usr-42' } });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const after = await scrape();
    expect(moved(before, after)).toEqual({
      'logdrain_telephony_dispatches_total{kind=phone,outcome=placed}': 1,
      'logdrain_telephony_dispatches_total{kind=web,outcome=placed}': 1,
      'logdrain_voice_sessions_created_total{}': 1,
    });
    expectBoundedLabels(after, [phone.body.sessionId, web.body.sessionId, voice.body.id, '14155550100', 'usr-42', 'agt_support', 'metered']);
  });

  it('count a media server out of reach as a vendor error of the media port', async () => {
    const scrape = scrapeOf(refused);
    const before = await scrape();
    const res = await refused.request('POST', '/developer/voice/agt_support/session', { token: 'lk_tel_all', body: {} });
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(moved(before, await scrape())).toEqual({ 'logdrain_telephony_vendor_errors_total{error_class=unavailable,port=media}': 1 });
  });
});

describe('skill metrics', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ SEED_FILE: SKILLS_SEED });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('count installs, updates and uninstalls once each, not a refused install', async () => {
    const skill = await listSkill(app, 'lk_s_write', { sourceSkillId: 'skl_install', displayName: 'Metered' });
    for (const v of ['1.0.0', '1.1.0']) await publish(app, 'lk_s_write', skill.id, v);
    const scrape = scrapeOf(app);
    const before = await scrape();
    for (const action of ['install', 'update', 'uninstall']) expect(before.some((s) => s.name === 'logdrain_skill_installs_total' && s.labels.action === action)).toBe(true);
    const install = (method: string, body?: unknown) =>
      app.request(method, `/marketplace/install/${skill.id}/agt_s1`, { token: 'lk_s_write', ...(body !== undefined ? { body } : {}) });
    expect((await install('POST', { version: '1.0.0' })).status).toBe(201);
    expect((await install('POST', { version: '1.0.0' })).status).toBe(409);
    expect((await install('PUT', { version: '1.1.0' })).status).toBe(200);
    expect((await install('DELETE')).status).toBe(200);
    const after = await scrape();
    expect(moved(before, after)).toEqual({
      'logdrain_skill_installs_total{action=install}': 1,
      'logdrain_skill_installs_total{action=update}': 1,
      'logdrain_skill_installs_total{action=uninstall}': 1,
    });
    expectBoundedLabels(after, [skill.id, 'agt_s1', 'skl_install', 'metered']);
  });
});
