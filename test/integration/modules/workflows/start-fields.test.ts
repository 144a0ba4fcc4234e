/**
 * What a start may say beyond its definition and input (spec 03 part 4.3): originThreadId and the
 * callback flag, the notification mode and target, a customer principal, a workspace override, a
 * state seed and composeId; their refusals (ORIGIN_THREAD_INVALID, CALLBACK_THREAD_REQUIRED,
 * VALIDATION_FAILED, 413 PAYLOAD_TOO_LARGE, WORKFLOW_NOT_FOUND), how the run detail shows them, and
 * the receipt and notify of the `fields=full` detail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor, type TestApp } from '../../../helpers/app.js';
import { startWorkflowsApp, WF_BASE } from '../../../helpers/workflows.js';

describe('workflow start fields', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startWorkflowsApp({
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '100000',
      WORKFLOW_RATE_LIMIT_BATCH_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const post = (body: unknown, token = 'lk_wf_all', headers?: Record<string, string>) => app.request('POST', `${WF_BASE}/runs`, { token, body, ...(headers ? { headers } : {}) });
  const start = async (body: unknown, token = 'lk_wf_all') => {
    const res = await post(body, token);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.runId as string;
  };
  const detail = async (runId: string, token = 'lk_wf_outputs', query = '?fields=full') => (await app.request('GET', `${WF_BASE}/runs/${runId}${query}`, { token })).body;
  const until = (runId: string, ok: (r: any) => boolean, token = 'lk_wf_outputs') =>
    waitFor(async () => {
      const r = await detail(runId, token);
      return ok(r) ? r : undefined;
    }, { what: `run ${runId} in the awaited state` });
  const REPORT = { workflowName: 'nightly-report', input: { day: 'd' } };

  describe('round trips', () => {
    const ALL = {
      ...REPORT,
      originThreadId: 'thr_chat/42:a',
      callback: true,
      notifyMode: 'email',
      notifyTarget: { channel: 'sms', threadId: '+15550100' },
      principal: { kind: 'customer', externalId: 'cus_42' },
      workspace: { repo: 'https://git.example.test/acme/report.git', ref: 'main', credentialsRef: 'cred_git', sizeGb: 50 },
      stateSeed: { cart: [1, 2], note: 'seed' },
    };

    it('records every field on the run and shows it in the full detail; the creator stays the calling user', async () => {
      const runId = await start(ALL);
      const run = await until(runId, (r) => r.status === 'completed');
      expect(run).toMatchObject({
        origin: 'definition', principalKind: 'customer', createdBy: { subjectType: 'user', subjectId: 'usr_ann' },
        originThreadId: 'thr_chat/42:a', callback: true,
        principal: { kind: 'customer', externalId: 'cus_42' },
        workspace: { repo: 'https://git.example.test/acme/report.git', ref: 'main', credentialsRef: 'cred_git', sizeGb: 50 },
        stateSeed: { cart: [1, 2], note: 'seed' },
        notify: { mode: 'email', target: { channel: 'sms', threadId: '+15550100' } },
      });
      // The summary (and the list) carry the principal's kind only.
      const summary = await detail(runId, 'lk_wf_outputs', '');
      expect(summary.principalKind).toBe('customer');
      for (const field of ['originThreadId', 'callback', 'principal', 'workspace', 'stateSeed', 'notify', 'receipt']) expect(summary).not.toHaveProperty(field);
      const listed = await app.request('GET', `${WF_BASE}/runs?limit=100`, { token: 'lk_wf_read' });
      expect((listed.body.items as any[]).find((r) => r.runId === runId)).toMatchObject({ principalKind: 'customer' });
    });

    it('hides the state seed without workflows:read-outputs, and receipt and notify from anyone but the creator or an org:manage holder', async () => {
      const runId = await start(ALL);
      await until(runId, (r) => r.status === 'completed');
      const reader = await detail(runId, 'lk_wf_read');
      expect(reader.stateSeed).toEqual({ __hidden: true });
      expect(reader.input).toEqual({ __hidden: true });
      expect(reader).toMatchObject({ originThreadId: 'thr_chat/42:a', principal: { kind: 'customer', externalId: 'cus_42' } });
      const member = await detail(runId, 'sess_max');
      expect(member.stateSeed).toEqual({ cart: [1, 2], note: 'seed' });
      expect(member).not.toHaveProperty('receipt');
      expect(member).not.toHaveProperty('notify');
    });

    it('defaults: no thread, no callback, notify {mode: app, target: null}, no principal, workspace or seed', async () => {
      const runId = await start(REPORT);
      const run = await until(runId, (r) => r.status === 'completed');
      expect(run).toMatchObject({
        principalKind: 'user', originThreadId: null, callback: false, principal: null, workspace: null, stateSeed: null,
        notify: { mode: 'app', target: null },
      });
    });

    it('keeps a JSON null state seed, and one of exactly 65536 bytes', async () => {
      const nullSeed = await start({ ...REPORT, stateSeed: null });
      expect((await until(nullSeed, (r) => r.status === 'completed')).stateSeed).toBeNull();
      // JSON text of a string is its characters and two quotes.
      const big = 'x'.repeat(65_534);
      const full = await start({ ...REPORT, stateSeed: big });
      expect((await until(full, (r) => r.status === 'completed')).stateSeed).toBe(big);
    });

    it('gives a batch run none of these settings: notify is null', async () => {
      const res = await app.request('POST', `${WF_BASE}/runs/batch`, { token: 'lk_wf_all', body: { workflowName: 'nightly-report', items: [{ idempotencyKey: `fields-batch-${Date.now()}`, input: { day: 'd' } }] } });
      expect(res.status).toBe(202);
      const run = await until(res.body.items[0].runId, (r) => r.status === 'completed');
      expect(run).toMatchObject({ notify: null, originThreadId: null, callback: false, principal: null, principalKind: 'user' });
      // A batch item takes none of them.
      const refused = await app.request('POST', `${WF_BASE}/runs/batch`, { token: 'lk_wf_all', body: { workflowName: 'nightly-report', items: [{ idempotencyKey: 'k', input: { day: 'd' }, originThreadId: 't' }] } });
      expect(refused.body).toMatchObject({ code: 'BATCH_ITEM_INVALID', index: 0, issues: [{ path: 'originThreadId', constraint: 'additionalProperties' }] });
    });

    it('replays a key by definition and input alone: other start fields do not make it another start', async () => {
      const key = `fields-replay-${Date.now()}`;
      const first = await post({ ...REPORT, originThreadId: 'thr_a' }, 'lk_wf_all', { 'idempotency-key': key });
      expect(first.status).toBe(202);
      const again = await post({ ...REPORT, originThreadId: 'thr_b', notifyMode: 'off' }, 'lk_wf_all', { 'idempotency-key': key });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ runId: first.body.runId, idempotentReplay: true });
      expect((await detail(first.body.runId)).originThreadId).toBe('thr_a');
    });
  });

  describe('the receipt', () => {
    it('is null until the run is terminal, then the run-end summary', async () => {
      const runId = await start({ workflowName: 'slow' });
      const running = await until(runId, (r) => r.status === 'running');
      expect(running.receipt).toBeNull();
      const run = await until(runId, (r) => r.status === 'completed');
      expect(run.receipt).toEqual({
        status: 'completed', completedAt: run.completedAt, durationMs: run.durationMs,
        steps: { total: 2, completed: 2, failed: 0, skipped: 0, running: 0, suspended: 0, pending: 0, cancelled: 0 },
        usage: { credits: 0, steps: 2 },
      });
    });

    it('carries the error of a failed run and the credits spent', async () => {
      const runId = await start({ graph: { steps: [{ id: 'pay', kind: 'costly', credits: 3 }, { id: 'check', kind: 'fail', code: 'NEEDS_HUMAN' }] } }, 'sess_ann');
      await until(runId, (r) => r.status === 'suspended');
      expect((await app.request('POST', `${WF_BASE}/runs/${runId}/steps/check/resolve`, { token: 'sess_ann', body: { outcome: 'fail' } })).status).toBe(200);
      const run = await until(runId, (r) => r.status === 'failed');
      expect(run.receipt).toMatchObject({
        status: 'failed', completedAt: run.completedAt, usage: { credits: 3, steps: 1 },
        steps: { total: 2, completed: 1, failed: 1 },
        error: { code: 'NEEDS_HUMAN', message: 'step check failed', stepId: 'check' },
      });
    });
  });

  describe('composeId', () => {
    it('starts a chat-composed definition of the agent: origin compose', async () => {
      const runId = await start({ composeId: 'wf_composed' });
      const run = await until(runId, (r) => r.status === 'completed');
      expect(run).toMatchObject({ workflowId: 'wf_composed', workflowName: 'composed', workflowVersionId: 'wfv_composed_1', origin: 'compose' });
    });

    it('answers WORKFLOW_NOT_FOUND for a definition that is not composed, or unknown; and is one of the exactly-one references', async () => {
      for (const composeId of ['wf_report', 'wf_nope', 'wf_other']) {
        const res = await post({ composeId });
        expect(res.status, composeId).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, code: 'WORKFLOW_NOT_FOUND', message: `No composed workflow ${composeId} for agent agt_support`, workflowId: composeId });
      }
      const both = await post({ composeId: 'wf_composed', workflowId: 'wf_report' });
      expect(both.status).toBe(400);
      expect(both.body).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [
          { path: 'workflowId', constraint: 'oneOf', message: 'exactly one of workflowName, workflowId, composeId, graph or script is required' },
          { path: 'composeId', constraint: 'oneOf', message: 'exactly one of workflowName, workflowId, composeId, graph or script is required' },
        ],
      });
      expect((await post({ composeId: 'has space' })).body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'composeId' }] });
    });
  });

  describe('refusals', () => {
    it('answers ORIGIN_THREAD_INVALID for an originThreadId that is empty, too long, not a string or holds a control character', async () => {
      for (const originThreadId of ['', 't'.repeat(257), 42, null, 'a\nb', 'tab\there', 'c1\u0085']) {
        const res = await post({ ...REPORT, originThreadId });
        expect(res.status, JSON.stringify(originThreadId)).toBe(400);
        expect(res.body).toEqual({
          statusCode: 400, code: 'ORIGIN_THREAD_INVALID', message: 'originThreadId must be 1 to 256 characters without control characters', field: 'originThreadId', max: 256,
        });
      }
      expect((await post({ ...REPORT, originThreadId: 't'.repeat(256) })).status).toBe(202);
      expect((await post({ ...REPORT, originThreadId: 'thread — ünïcode ✓' })).status).toBe(202);
    });

    it('answers CALLBACK_THREAD_REQUIRED for callback: true without an originThreadId', async () => {
      const res = await post({ ...REPORT, callback: true });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, code: 'CALLBACK_THREAD_REQUIRED', message: 'callback: true needs an originThreadId to call back on', field: 'callback' });
      expect((await post({ ...REPORT, callback: false })).status).toBe(202);
      expect((await post({ ...REPORT, callback: 'yes', originThreadId: 't' })).body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'callback', message: 'callback must be a boolean' }] });
    });

    it('answers VALIDATION_FAILED naming the field of a bad notification mode or target, principal or workspace', async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ notifyMode: 'sms' }, 'notifyMode', 'notifyMode must be one of emailApp, email, app, off'],
        [{ notifyTarget: { channel: 'fax', threadId: 't' } }, 'notifyTarget.channel', 'notifyTarget.channel must be one of chatapp, sms, email, webchat, teamchat'],
        [{ notifyTarget: { channel: 'sms' } }, 'notifyTarget.threadId', 'notifyTarget.threadId is required'],
        [{ notifyTarget: { channel: 'sms', threadId: '' } }, 'notifyTarget.threadId', 'notifyTarget.threadId must be 1 to 256 characters without control characters'],
        [{ principal: { kind: 'user', externalId: 'u' } }, 'principal.kind', 'principal.kind must be customer'],
        [{ principal: { kind: 'customer' } }, 'principal.externalId', 'principal.externalId is required'],
        [{ principal: 'cus_1' }, 'principal', 'principal must be an object {kind: customer, externalId}'],
        [{ workspace: { sizeGb: 0 } }, 'workspace.sizeGb', 'workspace.sizeGb must be an integer from 1 to 50'],
        [{ workspace: { sizeGb: 51 } }, 'workspace.sizeGb', 'workspace.sizeGb must be an integer from 1 to 50'],
        [{ workspace: { sizeGb: 2.5 } }, 'workspace.sizeGb', 'workspace.sizeGb must be an integer from 1 to 50'],
        [{ workspace: { repo: 'r' } }, 'workspace.sizeGb', 'workspace.sizeGb is required'],
        [{ workspace: { sizeGb: 1, branch: 'x' } }, 'workspace.branch', 'workspace.branch is not a field of workspace'],
        [{ workspace: { sizeGb: 1, ref: '' } }, 'workspace.ref', 'workspace.ref must be 1 to 256 characters'],
      ];
      for (const [fields, path, message] of cases) {
        const res = await post({ ...REPORT, ...fields });
        expect(res.status, JSON.stringify(fields)).toBe(400);
        expect(res.body, JSON.stringify(fields)).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED', details: [{ path, message }] });
      }
      expect((await post({ ...REPORT, workspace: { sizeGb: 1 } })).status).toBe(202);
    });

    it('answers 413 PAYLOAD_TOO_LARGE for a state seed over 65536 bytes of JSON', async () => {
      const res = await post({ ...REPORT, stateSeed: 'x'.repeat(65_535) });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'stateSeed is over 65536 bytes of JSON', field: 'stateSeed', max: 65_536 });
    });
  });

  describe('a customer principal', () => {
    it('is never an approver: the user who started the run keeps the creator\'s rights', async () => {
      const runId = await start({ graph: { steps: [{ id: 'check', kind: 'fail', code: 'NEEDS_HUMAN' }] }, principal: { kind: 'customer', externalId: 'cus_7' } }, 'sess_max');
      const parked = await until(runId, (r) => r.status === 'suspended');
      expect(parked).toMatchObject({ principalKind: 'customer', createdBy: { subjectType: 'user', subjectId: 'usr_max' } });
      // Another member may not; the creating user may.
      const other = await app.request('POST', `${WF_BASE}/runs/${runId}/steps/check/resolve`, { token: 'lk_wf_all', body: { outcome: 'skip' } });
      expect(other.body).toMatchObject({ code: 'APPROVAL_REQUIRES_HUMAN' });
      const creator = await app.request('POST', `${WF_BASE}/runs/${runId}/steps/check/resolve`, { token: 'sess_max', body: { outcome: 'skip' } });
      expect(creator.body).toMatchObject({ resolved: true, outcome: 'skip' });
    });
  });
});
