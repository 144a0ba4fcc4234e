/**
 * Recovery of parked runs and erasure (spec 03 parts 3, 4.3, 5; contract W6): retry-step (re-armed
 * attempt, the automatic retry budget, the attempt cap), resolve-step (person only, creator or
 * admin, skip, complete against the step's outputSchema, fail), the no-op answers of a park already
 * recovered, budget raises, and DELETE of a terminal run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../helpers/app.js';
import { startWorkflowsApp, WF_BASE } from '../../../helpers/workflows.js';

describe('workflow recovery', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startWorkflowsApp({
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '100000',
    });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const start = async (body: unknown, token = 'sess_ann') => {
    const res = await app.request('POST', `${WF_BASE}/runs`, { token, body });
    expect(res.status).toBe(202);
    return res.body.runId as string;
  };
  const detail = async (runId: string) => (await app.request('GET', `${WF_BASE}/runs/${runId}?fields=full`, { token: 'sess_ann' })).body;
  const post = (path: string, body?: unknown, token = 'sess_ann') => app.request('POST', `${WF_BASE}/runs/${path}`, { token, ...(body !== undefined ? { body } : {}) });
  async function until(runId: string, ok: (r: any) => boolean): Promise<any> {
    for (let i = 0; i < 300; i++) {
      const r = await detail(runId);
      if (ok(r)) return r;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error(`run ${runId} never reached the awaited state`);
  }
  const parkedAt = (runId: string, attempt: number) => until(runId, (r) => r.status === 'suspended' && r.gate?.attempt === attempt);
  const ALWAYS = (retries: number) => ({ graph: { steps: [{ id: 'try', kind: 'fail', retries, code: 'DOWN' }, { id: 'end', kind: 'noop' }] } });

  describe('retry', () => {
    it('re-arms the parked step; a later retry or resolve of that park answers the no-op', async () => {
      const runId = await start({ workflowName: 'flaky' });
      await parkedAt(runId, 2);
      const res = await post(`${runId}/steps/try/retry`, { note: 'upstream is back' }, 'lk_wf_exec');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ retried: true, attempt: 3, runStatus: 'queued', remainingParks: 0 });
      const run = await until(runId, (r) => r.status === 'completed');
      expect(run.steps[0]).toMatchObject({ stepId: 'try', status: 'completed', attempt: 3 });
      const again = await post(`${runId}/steps/try/retry`, {}, 'lk_wf_exec');
      expect(again.body).toEqual({ retried: false, reason: 'already_retried', recorded: { at: expect.any(Number), by: 'usr_ann', outcome: 'retried' }, runStatus: 'completed' });
      const resolve = await post(`${runId}/steps/try/resolve`, { outcome: 'skip' });
      expect(resolve.body).toEqual({ resolved: false, reason: 'already_retried', recorded: again.body.recorded, runStatus: 'completed' });
    });

    it('gives the automatic retries again only with resetRetries; the attempt number keeps counting', async () => {
      const runId = await start(ALWAYS(1));
      await parkedAt(runId, 2);
      expect((await post(`${runId}/steps/try/retry`, { resetRetries: true })).body.attempt).toBe(3);
      // Attempts 3 and 4 (one automatic retry), then parked again.
      await parkedAt(runId, 4);
      expect((await post(`${runId}/steps/try/retry`)).body).toMatchObject({ retried: true, attempt: 5 });
      // Without the reset: no automatic retry, parked at attempt 5.
      const run = await parkedAt(runId, 5);
      expect(run.steps[0]).toMatchObject({ status: 'suspended', attempt: 5 });
    });

    it('refuses a retry past attempt 20 with STEP_RETRY_CAP', async () => {
      const runId = await start(ALWAYS(19));
      await parkedAt(runId, 20);
      const res = await post(`${runId}/steps/try/retry`);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        statusCode: 409, code: 'STEP_RETRY_CAP', message: 'Step try has run 20 attempts; at most 20 may run', stepId: 'try', attempt: 20, toAttempt: 21, maxAttempts: 20,
      });
    });

    it('answers STEP_NOT_FOUND, STEP_NOT_PARKED, RUN_TERMINAL and RUN_NOT_FOUND', async () => {
      const runId = await start(ALWAYS(0));
      await parkedAt(runId, 1);
      const missing = await post(`${runId}/steps/nope/retry`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ statusCode: 404, code: 'STEP_NOT_FOUND', message: `No step nope in run ${runId}`, runId, stepId: 'nope' });
      const pending = await post(`${runId}/steps/end/retry`);
      expect(pending.status).toBe(409);
      expect(pending.body).toEqual({ statusCode: 409, code: 'STEP_NOT_PARKED', message: `Step end of run ${runId} is not parked`, stepId: 'end', status: 'pending' });
      await post(`${runId}/cancel`);
      const terminal = await post(`${runId}/steps/try/retry`);
      expect(terminal.body).toEqual({ statusCode: 409, code: 'RUN_TERMINAL', message: `Run ${runId} is cancelled`, runId, status: 'cancelled' });
      expect((await post('wfr_nope/steps/try/retry')).body.code).toBe('RUN_NOT_FOUND');
      expect((await post(`${runId}/steps/try/retry`, {}, 'lk_wf_read')).body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'workflows:execute' });
    });
  });

  describe('resolve', () => {
    const guarded = { graph: { steps: [
      { id: 'check', kind: 'fail', code: 'NEEDS_HUMAN', outputSchema: { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } } },
      { id: 'end', kind: 'output', value: 'done' },
    ] } };

    it('is for people only, the creator or an organization admin', async () => {
      const runId = await start(guarded);
      await parkedAt(runId, 1);
      const key = await post(`${runId}/steps/check/resolve`, { outcome: 'skip' }, 'lk_wf_all');
      expect(key.status).toBe(403);
      expect(key.body).toEqual({ statusCode: 403, code: 'APPROVAL_REQUIRES_HUMAN', message: 'Only a person may resolve a parked step; this credential is an API key.' });
      const member = await post(`${runId}/steps/check/resolve`, { outcome: 'skip' }, 'sess_max');
      expect(member.status).toBe(403);
      expect(member.body).toEqual({ statusCode: 403, code: 'NOT_RUN_CREATOR', message: `Only the run's creator or an organization admin may do this to run ${runId}`, runId });
      // The member's own run: its creator may.
      const own = await start(guarded, 'sess_max');
      await parkedAt(own, 1);
      expect((await post(`${own}/steps/check/resolve`, { outcome: 'skip' }, 'sess_max')).body).toMatchObject({ resolved: true, outcome: 'skip' });
    });

    it('completes the step with an output checked against its outputSchema, and the run goes on', async () => {
      const runId = await start(guarded);
      await parkedAt(runId, 1);
      const missing = await post(`${runId}/steps/check/resolve`, {});
      expect(missing.status).toBe(400);
      expect(missing.body.details).toEqual([{ path: 'output', constraint: 'required', message: 'output is required to resolve a step with complete' }]);
      const invalid = await post(`${runId}/steps/check/resolve`, { output: { ok: 'yes' } });
      expect(invalid.status).toBe(400);
      expect(invalid.body).toEqual({
        statusCode: 400, code: 'RESOLVE_OUTPUT_INVALID', message: 'The output does not match the output schema of step check', stepId: 'check',
        issues: [{ path: 'output.ok', constraint: 'type', message: 'output.ok must be a boolean' }],
      });
      const big = await post(`${runId}/steps/check/resolve`, { output: { ok: true, pad: 'p'.repeat(262_144) } });
      expect(big.status).toBe(413);
      expect(big.body).toEqual({ statusCode: 413, code: 'OUTPUT_TOO_LARGE', message: 'output is over 262144 bytes of JSON', field: 'output', max: 262_144 });
      const ok = await post(`${runId}/steps/check/resolve`, { output: { ok: true }, note: 'checked by hand' });
      expect(ok.body).toEqual({ resolved: true, outcome: 'complete', runStatus: 'queued', remainingParks: 0 });
      const run = await until(runId, (r) => r.status === 'completed');
      expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['completed', 'completed']);
      expect(run.output).toBe('done');
      const again = await post(`${runId}/steps/check/resolve`, { outcome: 'fail' });
      expect(again.body).toEqual({ resolved: false, reason: 'already_resolved', recorded: { at: expect.any(Number), by: 'usr_ann', outcome: 'complete' }, runStatus: 'completed' });
      expect((await post(`${runId}/steps/check/retry`)).body).toMatchObject({ retried: false, reason: 'already_resolved' });
    });

    it('skips the step, or fails the run with the step\'s code', async () => {
      const skipped = await start(guarded);
      await parkedAt(skipped, 1);
      await post(`${skipped}/steps/check/resolve`, { outcome: 'skip' });
      const run = await until(skipped, (r) => r.status === 'completed');
      expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['skipped', 'completed']);
      expect(run.counts).toMatchObject({ skipped: 1, completed: 1 });

      const failed = await start(guarded);
      await parkedAt(failed, 1);
      const res = await post(`${failed}/steps/check/resolve`, { outcome: 'fail' });
      expect(res.body).toEqual({ resolved: true, outcome: 'fail', runStatus: 'failed', remainingParks: 0 });
      const ended = await detail(failed);
      expect(ended).toMatchObject({ status: 'failed', error: { code: 'NEEDS_HUMAN', message: 'step check failed', stepId: 'check' } });
      expect(ended.steps.map((s: { status: string }) => s.status)).toEqual(['failed', 'pending']);
      expect(ended.durationMs).toBeGreaterThanOrEqual(0);
    });
  });

  describe('budget raise', () => {
    const costly = { graph: { steps: [{ id: 'a', kind: 'costly', credits: 30 }, { id: 'b', kind: 'costly', credits: 30 }] }, budget: { maxCredits: 50 } };

    it('raises the cap of a budget-parked run; the run resumes once the raise covers the next reserve', async () => {
      const runId = await start(costly, 'lk_wf_all');
      const parkedGate = (await until(runId, (r) => r.status === 'gated' && r.gate?.kind === 'budget')).gate;
      expect(parkedGate).toEqual({ kind: 'budget', since: expect.any(Number), stepId: 'b', dimension: 'credits', spent: 30, cap: 50 });
      const low = await post(`${runId}/budget`, { maxCredits: 50 }, 'lk_wf_all');
      expect(low.status).toBe(400);
      expect(low.body.details).toEqual([{ path: 'maxCredits', constraint: 'exclusiveMinimum', message: "maxCredits must be above the run's current maxCredits (50)" }]);
      const none = await post(`${runId}/budget`, { note: 'more' }, 'lk_wf_all');
      expect(none.body.details).toEqual([{ path: 'maxCredits', constraint: 'required', message: 'at least one of maxCredits, maxSteps, maxJobSeconds or maxDurationSeconds is required' }]);
      const over = await post(`${runId}/budget`, { maxCredits: 20_000 }, 'lk_wf_all');
      expect(over.status).toBe(400);
      expect(over.body).toEqual({ statusCode: 400, code: 'CAP_EXCEEDED', message: "maxCredits 20000 is above the organization's policy cap of 10000", field: 'maxCredits', cap: 10_000 });
      const notCreator = await post(`${runId}/budget`, { maxCredits: 100 }, 'sess_max');
      expect(notCreator.body).toMatchObject({ statusCode: 403, code: 'NOT_RUN_CREATOR' });

      const partial = await post(`${runId}/budget`, { maxCredits: 55 }, 'lk_wf_all');
      expect(partial.body).toEqual({ raised: true, budget: expect.objectContaining({ maxCredits: 55, spent: { credits: 30, steps: 1 } }), runStatus: 'gated', resumed: false });
      // Short of the reserve (30 + 30 > 55) the run parks again under the cap now in force.
      const reparked = await detail(runId);
      expect(reparked).toMatchObject({ status: 'gated', phase: 'parked', budget: { maxCredits: 55 } });
      expect(reparked.gate).toEqual({ kind: 'budget', since: parkedGate.since, stepId: 'b', dimension: 'credits', spent: 30, cap: 55 });
      const enough = await post(`${runId}/budget`, { maxCredits: 100, maxDurationSeconds: 7200, note: 'approved' }, 'lk_wf_all');
      expect(enough.body).toMatchObject({ raised: true, runStatus: 'queued', resumed: true, budget: { maxCredits: 100, maxDurationSeconds: 7200 } });
      const run = await until(runId, (r) => r.status === 'completed');
      expect(run.budget).toMatchObject({ maxCredits: 100, spent: { credits: 60 } });
      expect(run.budgetRaises).toEqual([
        { at: expect.any(Number), by: 'usr_ann', caps: { maxCredits: 55 } },
        { at: expect.any(Number), by: 'usr_ann', caps: { maxCredits: 100, maxDurationSeconds: 7200 }, note: 'approved' },
      ]);
      expect((await post(`${runId}/budget`, { maxCredits: 100 }, 'lk_wf_all')).body).toEqual({ raised: false, reason: 'already_raised', runStatus: 'completed' });
      const notParked = await post(`${runId}/budget`, { maxCredits: 200 }, 'lk_wf_all');
      expect(notParked.status).toBe(409);
      expect(notParked.body).toEqual({ statusCode: 409, code: 'BUDGET_NOT_RAISABLE', message: `Run ${runId} is completed, not parked on its budget`, runId, status: 'completed' });
    });
  });

  describe('DELETE /runs/:runId', () => {
    it('erases a terminal run for its creator (a person); the run is gone', async () => {
      const runId = await start({ workflowName: 'slow' });
      await until(runId, (r) => r.status === 'running');
      const del = (token: string) => app.request('DELETE', `${WF_BASE}/runs/${runId}`, { token });
      const key = await del('lk_wf_all');
      expect(key.body).toMatchObject({ statusCode: 403, code: 'APPROVAL_REQUIRES_HUMAN' });
      expect((await del('sess_max')).body).toMatchObject({ statusCode: 403, code: 'NOT_RUN_CREATOR' });
      const live = await del('sess_ann');
      expect(live.status).toBe(409);
      expect(live.body).toEqual({ statusCode: 409, code: 'RUN_NOT_TERMINAL', message: `Run ${runId} is running; cancel it first`, runId, status: 'running', nextAction: 'cancel' });
      await until(runId, (r) => r.status === 'completed');
      const erased = await del('sess_ann');
      expect(erased.status).toBe(202);
      expect(erased.body).toEqual({ accepted: true, purgeId: expect.stringMatching(/^wfp_/) });
      expect((await app.request('GET', `${WF_BASE}/runs/${runId}`, { token: 'sess_ann' })).body).toMatchObject({ statusCode: 404, code: 'RUN_NOT_FOUND' });
      const left = await app.store.sql.query('select 1 from workflow_run_steps where run_id = $1 union all select 1 from workflow_step_attempts where run_id = $1', [runId]);
      expect(left).toEqual([]);
      expect((await del('sess_ann')).status).toBe(404);
    });
  });
});
