/**
 * Run starts, the run list and the run detail (spec 03 part 4.3, contract W4, W5): what a start
 * refuses and in which words, idempotent starts (replay, conflict, a race), the version pin, budget
 * capping, waitSeconds, every list filter with its errors, and payloads by scope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startWorkflowsApi, WF_BASE } from '../../../helpers/workflows.js';

const LIMITS = { WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '100000' };

describe('workflow runs', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startWorkflowsApi(LIMITS, { maxCredits: 50, maxDurationSeconds: 600 });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const start = (body: unknown, token = 'lk_wf_all', headers: Record<string, string> = {}) => app.request('POST', `${WF_BASE}/runs`, { token, body, headers });
  const detail = (runId: string, query = '', token = 'lk_wf_all') => app.request('GET', `${WF_BASE}/runs/${runId}${query}`, { token });
  const list = (query: string, token = 'lk_wf_all') => app.request('GET', `${WF_BASE}/runs${query}`, { token });
  async function settled(runId: string): Promise<any> {
    for (let i = 0; i < 200; i++) {
      const r = await detail(runId);
      if (['completed', 'failed', 'cancelled', 'timed_out', 'abandoned', 'suspended'].includes(r.body.status)) return r.body;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`run ${runId} did not settle`);
  }

  describe('POST /runs', () => {
    it('starts a run of the active version: 202 {runId, status, watchHint}, and the executor completes it', async () => {
      const res = await start({ workflowName: 'nightly-report', input: { day: '2026-11-25' } });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        runId: expect.stringMatching(/^wfr_/), status: 'queued',
        watchHint: { events: `/workflows/agt_support/runs/${res.body.runId}/events`, poll: `/workflows/agt_support/runs/${res.body.runId}` },
      });
      const run = await settled(res.body.runId);
      expect(run).toMatchObject({
        runId: res.body.runId, workflowId: 'wf_report', workflowName: 'nightly-report', workflowVersionId: 'wfv_report_2', form: 'graph',
        agentId: 'agt_support', orgId: 'org_acme', status: 'completed', gate: null, trigger: 'api', origin: 'definition', principalKind: 'user',
        createdBy: { subjectType: 'user', subjectId: 'usr_ann' }, hasOutput: true, stepCount: 2,
        counts: { total: 2, completed: 2, failed: 0, skipped: 0, running: 0, suspended: 0, pending: 0, cancelled: 0 },
      });
      expect(run.durationMs).toBeGreaterThanOrEqual(0);
      expect(run.completedAt).toBeGreaterThanOrEqual(run.startedAt);
      expect(run.steps).toEqual([
        expect.objectContaining({ stepId: 'fetch', kind: 'noop', status: 'completed', attempt: 1 }),
        expect.objectContaining({ stepId: 'out', kind: 'output', status: 'completed', attempt: 1 }),
      ]);
      expect(run.edges).toEqual([{ from: 'fetch', to: 'out' }]);
      expect((await detail(res.body.runId, '?fields=full')).body.output).toBe('v2');
    });

    it('pins a version given, by workflowId too; a new active version never moves it', async () => {
      const res = await start({ workflowId: 'wf_report', workflowVersionId: 'wfv_report_1', input: { day: 'd' } });
      expect(res.status).toBe(202);
      const run = await settled(res.body.runId);
      expect(run.workflowVersionId).toBe('wfv_report_1');
      expect((await detail(res.body.runId, '?fields=full')).body.output).toEqual({ ok: true });
      const other = await start({ workflowId: 'wf_report', workflowVersionId: 'wfv_slow_1', input: { day: 'd' } });
      expect(other.status).toBe(400);
      expect(other.body.details).toEqual([{ path: 'workflowVersionId', constraint: 'exists', message: 'workflowVersionId wfv_slow_1 is not a version of workflow wf_report' }]);
    });

    it('validates input against the version\'s inputSchema, naming each field', async () => {
      const res = await start({ workflowName: 'nightly-report', input: { level: 'mid' } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        statusCode: 400, code: 'VALIDATION_FAILED',
        details: [
          { path: 'input.day', constraint: 'required', message: 'input.day is required' },
          { path: 'input.level', constraint: 'enum', message: 'input.level must be one of "low", "high"' },
        ],
      });
      const typed = await start({ workflowName: 'nightly-report', input: { day: 5 } });
      expect(typed.body.details).toEqual([{ path: 'input.day', constraint: 'type', message: 'input.day must be a string' }]);
    });

    it('needs exactly one of workflowName, workflowId, composeId, graph or script', async () => {
      const none = await start({ input: {} });
      expect(none.status).toBe(400);
      expect(none.body.details).toEqual([{ path: 'workflowName', constraint: 'oneOf', message: 'exactly one of workflowName, workflowId, composeId, graph or script is required' }]);
      const two = await start({ workflowName: 'slow', workflowId: 'wf_slow' });
      expect(two.body.details.map((d: { path: string }) => d.path)).toEqual(['workflowName', 'workflowId']);
    });

    it('refuses body fields by their rules, in details[]', async () => {
      const res = await start({ workflowName: 'x'.repeat(121), waitSeconds: 56, tags: Array(11).fill('t'), correlationKey: 'a b', budget: { maxSteps: 0 }, extra: 1 });
      expect(res.status).toBe(400);
      const byPath = Object.fromEntries(res.body.details.map((d: { path: string; message: string }) => [d.path, d.message]));
      expect(byPath).toEqual({
        workflowName: 'workflowName must be 1 to 120 characters',
        waitSeconds: 'waitSeconds must be an integer from 0 to 55',
        tags: 'tags may hold at most 10 tags',
        correlationKey: 'correlationKey must be 1 to 128 letters, digits, :, _, -, . or /',
        'budget.maxSteps': 'budget.maxSteps must be an integer of at least 1 (omit it rather than send 0)',
        extra: 'extra is not a field of a run start',
      });
    });

    it('answers 404 WORKFLOW_NOT_FOUND for an unknown definition or another agent\'s', async () => {
      const unknown = await start({ workflowName: 'nope' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ statusCode: 404, code: 'WORKFLOW_NOT_FOUND', message: 'No workflow with name nope for agent agt_support', workflowId: null });
      const foreign = await start({ workflowId: 'wf_other' });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ statusCode: 404, code: 'WORKFLOW_NOT_FOUND', message: 'No workflow with id wf_other for agent agt_support', workflowId: 'wf_other' });
    });

    it('refuses a definition without an active version unless a version is pinned', async () => {
      const res = await start({ workflowName: 'draft-only' });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([{ path: 'workflowName', constraint: 'active', message: 'workflow wf_draft has no active version; pin one with workflowVersionId' }]);
      expect((await start({ workflowName: 'draft-only', workflowVersionId: 'wfv_draft_1' })).status).toBe(202);
    });

    it('answers 413 PAYLOAD_TOO_LARGE naming the field over 256 KB', async () => {
      const big = 'x'.repeat(262_144);
      const input = await start({ workflowName: 'slow', input: { big } });
      expect(input.status).toBe(413);
      expect(input.body).toEqual({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'input is over 262144 bytes of JSON', field: 'input', max: 262_144 });
      const script = await start({ script: big });
      expect(script.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: 'script', max: 262_144 });
      const graph = await start({ graph: { steps: [{ id: 'a', kind: 'output', value: big }] } });
      expect(graph.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', field: 'graph', max: 262_144 });
    });

    it('runs an inline graph or script (origin inline) only with workflows:write', async () => {
      const graph = { steps: [{ id: 'a', kind: 'noop' }, { id: 'b', kind: 'output', value: [1, 2] }] };
      const denied = await start({ graph }, 'lk_wf_exec');
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        statusCode: 403, code: 'INSUFFICIENT_SCOPE', message: 'This credential lacks the workflows:write scope.',
        resourceType: 'agent', resourceId: 'agt_support', requiredScope: 'workflows:write',
      });
      const ok = await start({ graph });
      expect(ok.status).toBe(202);
      const run = await settled(ok.body.runId);
      expect(run).toMatchObject({ origin: 'inline', form: 'graph', workflowId: null, workflowVersionId: null, status: 'completed' });
      const script = await start({ script: 'print(1)' }, 'sess_ann');
      const scripted = await settled(script.body.runId);
      expect(scripted).toMatchObject({ form: 'script', status: 'completed', steps: [expect.objectContaining({ stepId: 'main', kind: 'noop' })] });
      const bad = await start({ graph: { steps: [{ id: 'a', kind: 'teleport' }, { id: 'a', kind: 'sleep' }] } });
      expect(bad.body.details).toEqual([
        { path: 'graph.steps.0.kind', constraint: 'enum', message: 'graph.steps.0.kind must be one of noop, output, sleep, fail, costly' },
        { path: 'graph.steps.1.id', constraint: 'uniqueItems', message: 'graph.steps.1.id repeats the step id a' },
        { path: 'graph.steps.1.ms', constraint: 'required', message: 'graph.steps.1.ms is required for a sleep step' },
      ]);
    });

    it('refuses a body string Postgres cannot store', async () => {
      const res = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body: { workflowName: 'nightly-report', input: { day: 'a\u0000b' } } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'input.day' });
      expect(res.body.details).toEqual([{ path: 'input.day', constraint: 'storable', message: 'input.day must not contain NUL characters or unpaired surrogates' }]);
    });

    it('needs workflows:execute to start', async () => {
      const res = await start({ workflowName: 'slow' }, 'lk_wf_read');
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'INSUFFICIENT_SCOPE', requiredScope: 'workflows:execute' });
    });

    it('lowers a budget above the organization policy to it; deadlineAt is startedAt + maxDurationSeconds', async () => {
      const res = await start({ workflowName: 'nightly-report', input: { day: 'd' }, budget: { maxCredits: 500, maxDurationSeconds: 7200, maxSteps: 5 } });
      const run = (await detail(res.body.runId)).body;
      expect(run.budget).toMatchObject({ maxCredits: 50, maxSteps: 5, maxDurationSeconds: 600, unit: 'credits', spent: { credits: 0, steps: expect.any(Number) } });
      expect(run.budget.deadlineAt).toBe(run.startedAt + 600_000);
      const plain = (await detail((await start({ workflowName: 'nightly-report', input: { day: 'd' } })).body.runId)).body;
      expect(plain.budget).toMatchObject({ maxSteps: 100, maxDurationSeconds: 600 });
      expect(plain.budget).not.toHaveProperty('maxCredits');
    });

    it('with waitSeconds answers 200 with the detail once the run settles, else the usual 202', async () => {
      const done = await start({ workflowName: 'nightly-report', input: { day: 'd' }, waitSeconds: 10 });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ status: 'completed', output: 'v2', input: { day: 'd' } });
      const slow = await start({ workflowName: 'slow', waitSeconds: 1 });
      expect(slow.status).toBe(202);
      expect(['queued', 'running']).toContain(slow.body.status);
    });

    it('with waitSeconds answers a run that parks at once with 202 and the status it parked in, not the one it started with', async () => {
      // flaky fails its first step past its one automatic retry: it suspends, which no wait can end.
      const parked = await start({ workflowName: 'flaky', waitSeconds: 20 });
      expect(parked.status).toBe(202);
      expect(parked.body).toMatchObject({ runId: expect.any(String), status: 'suspended', watchHint: expect.any(Object) });
      expect((await detail(parked.body.runId)).body.status).toBe('suspended');
    });
  });

  describe('idempotent starts', () => {
    it('replays the same key with the same definition and input: 200 with the run, once', async () => {
      const body = { workflowName: 'nightly-report', input: { day: 'k1' }, idempotencyKey: 'key-one' };
      const first = await start(body);
      expect(first.status).toBe(202);
      const again = await start(body);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({
        runId: first.body.runId, status: expect.any(String), workflowId: 'wf_report', workflowName: 'nightly-report', startedAt: expect.any(Number),
        watchHint: first.body.watchHint, idempotentReplay: true, deduplicated: true,
      });
      // The key is the agent's: another credential of the agent replays it too.
      expect((await start(body, 'sess_ann')).body.runId).toBe(first.body.runId);
    });

    it('answers 409 IDEMPOTENCY_KEY_REUSED naming the run for another input or definition', async () => {
      const first = await start({ workflowName: 'nightly-report', input: { day: 'k2' }, idempotencyKey: 'key-two' });
      const other = await start({ workflowName: 'nightly-report', input: { day: 'other' }, idempotencyKey: 'key-two' });
      expect(other.status).toBe(409);
      expect(other.body).toMatchObject({ statusCode: 409, code: 'IDEMPOTENCY_KEY_REUSED', runId: first.body.runId });
      const otherDef = await start({ workflowName: 'slow', input: { day: 'k2' }, idempotencyKey: 'key-two' });
      expect(otherDef.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', runId: first.body.runId });
    });

    it('takes the Idempotency-Key header over the body key', async () => {
      const first = await start({ workflowName: 'nightly-report', input: { day: 'h' }, idempotencyKey: 'body-key' }, 'lk_wf_all', { 'idempotency-key': 'header-key' });
      const byHeader = await start({ workflowName: 'nightly-report', input: { day: 'h' } }, 'lk_wf_all', { 'idempotency-key': 'header-key' });
      expect(byHeader.status).toBe(200);
      expect(byHeader.body.runId).toBe(first.body.runId);
      // The body key was not used.
      expect((await start({ workflowName: 'nightly-report', input: { day: 'h' }, idempotencyKey: 'body-key' })).status).toBe(202);
    });

    it('gives racing starts with one key one run', async () => {
      const body = { workflowName: 'nightly-report', input: { day: 'race' }, idempotencyKey: 'race-key' };
      const answers = await Promise.all(Array.from({ length: 8 }, () => start(body)));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 202]);
      expect(new Set(answers.map((a) => a.body.runId)).size).toBe(1);
      const runs = await list('?limit=100');
      expect(runs.body.items.filter((r: { runId: string }) => r.runId === answers[0]!.body.runId)).toHaveLength(1);
    });
  });

  describe('GET /runs and GET /runs/:runId', () => {
    let tagged: string;
    beforeAll(async () => {
      const t = await start({ workflowName: 'nightly-report', input: { day: 'tags' }, tags: ['blue', 'nightly'], correlationKey: 'order:42/a.b' });
      tagged = t.body.runId;
      await settled(tagged);
    });

    it('lists the agent\'s runs newest first with cursor paging', async () => {
      const all = await list('?limit=100');
      expect(all.status).toBe(200);
      const created = all.body.items.map((r: { createdAt: number }) => r.createdAt);
      expect(created).toEqual([...created].sort((a, b) => b - a));
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.body.items.map((r: { runId: string }) => r.runId));
        cursor = page.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(all.body.items.map((r: { runId: string }) => r.runId));
      const oldest = await list('?sort=createdAt&limit=100');
      expect(oldest.body.items.map((r: { runId: string }) => r.runId)).toEqual([...seen].reverse());
    });

    it('filters by tags (every one), correlationKey, workflowId, status, trigger and updatedSince', async () => {
      const ids = async (q: string) => (await list(q)).body.items.map((r: { runId: string }) => r.runId);
      expect(await ids('?tag=blue&tag=nightly')).toEqual([tagged]);
      expect(await ids('?tag=blue&tag=red')).toEqual([]);
      expect(await ids('?correlationKey=order:42/a.b')).toEqual([tagged]);
      const inline = await ids('?workflowId=wf_slow&limit=100');
      for (const r of (await list('?workflowId=wf_slow&limit=100')).body.items) expect(r.workflowId).toBe('wf_slow');
      expect(inline.length).toBeGreaterThan(0);
      for (const r of (await list('?status=completed,cancelled&limit=100')).body.items) expect(['completed', 'cancelled']).toContain(r.status);
      expect((await list('?trigger=chat')).body.items).toEqual([]);
      expect((await list(`?updatedSince=${Date.now() + 60_000}`)).body.items).toEqual([]);
      expect(await ids(`?updatedSince=${Date.now() - 600_000}&tag=blue`)).toEqual([tagged]);
    });

    it('filters and sorts by duration, terminal runs only', async () => {
      const bounded = (await list('?minDurationMs=0&maxDurationMs=600000&limit=100')).body.items;
      expect(bounded.length).toBeGreaterThan(0);
      for (const r of bounded) expect(['completed', 'failed', 'cancelled', 'timed_out', 'abandoned']).toContain(r.status);
      const longest = (await list('?sort=-durationMs&minDurationMs=0&limit=100')).body.items.map((r: { durationMs: number }) => r.durationMs);
      expect(longest).toEqual([...longest].sort((a, b) => b - a));
      const pageOne = await list('?sort=durationMs&minDurationMs=0&limit=2');
      const pageTwo = await list(`?sort=durationMs&minDurationMs=0&limit=2&cursor=${pageOne.body.nextCursor}`);
      expect(pageTwo.body.items[0].durationMs).toBeGreaterThanOrEqual(pageOne.body.items[1].durationMs);
    });

    it('answers VALIDATION_FAILED with issues[] naming the parameter, BAD_CURSOR and CORRELATION_KEY_INVALID', async () => {
      const status = await list('?status=done');
      expect(status.status).toBe(400);
      const statusIssue = { path: 'status', constraint: 'enum', message: 'status must be a comma-separated list of queued, gated, running, suspended, completed, failed, cancelled, timed_out, abandoned' };
      expect(status.body).toEqual({ statusCode: 400, code: 'VALIDATION_FAILED', message: statusIssue.message, field: 'status', details: [statusIssue], issues: [statusIssue] });
      const sort = await list('?sort=name');
      expect(sort.body.issues).toEqual([{ path: 'sort', constraint: 'enum', message: 'sort must be one of -createdAt, createdAt, -durationMs, durationMs' }]);
      const since = await list('?updatedSince=yesterday');
      expect(since.body.issues).toEqual([{ path: 'updatedSince', constraint: 'pattern', message: 'updatedSince must be a whole number' }]);
      const tags = await list(`?${Array.from({ length: 11 }, (_, i) => `tag=t${i}`).join('&')}`);
      expect(tags.body.issues).toEqual([{ path: 'tag', constraint: 'maxItems', message: 'tag may be given at most 10 times' }]);
      const unknown = await list('?colour=blue');
      expect(unknown.body.issues).toEqual([{ path: 'colour', constraint: 'additionalProperties', message: 'colour is not a filter of this route' }]);
      const bounds = await list('?minDurationMs=10&maxDurationMs=5');
      expect(bounds.body.issues).toEqual([{ path: 'maxDurationMs', constraint: 'minimum', message: 'maxDurationMs must be at least minDurationMs' }]);

      const first = await list('?limit=1');
      const wrongSort = await list(`?sort=createdAt&cursor=${first.body.nextCursor}`);
      expect(wrongSort.status).toBe(400);
      expect(wrongSort.body).toEqual({ statusCode: 400, code: 'BAD_CURSOR', message: 'cursor is not a cursor this route returned for this sort' });
      expect((await list('?cursor=%%%')).body.code).toBe('BAD_CURSOR');

      const key = await list('?correlationKey=has%20space');
      expect(key.status).toBe(400);
      expect(key.body).toEqual({ statusCode: 400, code: 'CORRELATION_KEY_INVALID', message: 'correlationKey must be 1 to 128 letters, digits, :, _, -, . or /', correlationKey: 'has space' });
      expect((await list(`?correlationKey=${'k'.repeat(129)}`)).body.code).toBe('CORRELATION_KEY_INVALID');
    });

    it('reads a run: summary by default; full adds input and output, hidden without workflows:read-outputs', async () => {
      const summary = await detail(tagged, '', 'lk_wf_read');
      expect(summary.status).toBe(200);
      for (const field of ['input', 'output', 'receipt', 'notify']) expect(summary.body).not.toHaveProperty(field);
      expect(summary.body).toMatchObject({ runId: tagged, tags: ['blue', 'nightly'], correlationKey: 'order:42/a.b', hasOutput: true });
      const hidden = await detail(tagged, '?fields=full', 'lk_wf_read');
      expect(hidden.body.input).toEqual({ __hidden: true });
      expect(hidden.body.output).toEqual({ __hidden: true });
      const shown = await detail(tagged, '?fields=full', 'lk_wf_outputs');
      expect(shown.body.input).toEqual({ day: 'tags' });
      expect(shown.body.output).toBe('v2');
      // receipt and notify: for the creator (usr_ann owns these keys) or an org:manage holder only.
      expect(shown.body.receipt).toMatchObject({ status: 'completed', completedAt: shown.body.completedAt });
      expect(shown.body.notify).toEqual({ mode: 'app', target: null });
      const member = await detail(tagged, '?fields=full', 'sess_max');
      expect(member.body.output).toBe('v2');
      expect(member.body).not.toHaveProperty('receipt');
      expect(member.body).not.toHaveProperty('notify');
      const fields = await detail(tagged, '?fields=all');
      expect(fields.status).toBe(400);
      expect(fields.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'fields', constraint: 'enum', message: 'fields must be summary or full' }] });
    });

    it('keeps an output over 256 KB out of line as a reference', async () => {
      const res = await start({ workflowName: 'big-output' });
      await settled(res.body.runId);
      const full = await detail(res.body.runId, '?fields=full');
      expect(full.body.output).toEqual({ __cdnRef: true, outputPreview: expect.any(String), outputRef: expect.any(String) });
      expect(full.body.output.outputPreview.length).toBeLessThanOrEqual(1024);
    });

    it('answers 404 RUN_NOT_FOUND for an unknown run or one of another agent', async () => {
      const unknown = await detail('wfr_nope');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ statusCode: 404, code: 'RUN_NOT_FOUND', message: 'No run wfr_nope for agent agt_support', runId: 'wfr_nope' });
      const elsewhere = await app.request('GET', `/workflows/agt_other/runs/${tagged}`, { token: 'lk_wf_all' });
      expect(elsewhere.status).toBe(404);
      expect(elsewhere.body.code).toBe('RUN_NOT_FOUND');
      expect((await app.request('GET', '/workflows/agt_other/runs', { token: 'lk_wf_all' })).body.items).toEqual([]);
    });

    it('needs workflows:read on the agent', async () => {
      expect((await list('', 'lk_wf_none')).body).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: 'workflows:read' });
      expect((await detail(tagged, '', 'lk_wf_globex')).body.code).toBe('RESOURCE_NOT_PROJECTED');
    });
  });
});
