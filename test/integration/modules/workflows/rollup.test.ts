/**
 * GET /workflows/:agentId/definitions/:workflowId/rollup (spec 03 part 4.3, contract W5): runs by
 * UTC creation day with their outcome counts, duration percentiles, credits and failed step
 * attempts; the range rules; answers kept 60 seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../helpers/app.js';
import { startWorkflowsApp, WF_BASE } from '../../../helpers/workflows.js';

const DAY = 86_400_000;

describe('workflow rollup', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startWorkflowsApp({ WORKFLOW_RATE_LIMIT_READ_PER_MIN: '100000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '100000' });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const start = async (body: unknown) => (await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_all', body })).body.runId as string;
  const rollup = (workflowId: string, query = '', token = 'lk_wf_read') => app.request('GET', `${WF_BASE}/definitions/${workflowId}/rollup${query}`, { token });
  async function until(runId: string, statuses: string[]): Promise<void> {
    for (let i = 0; i < 300; i++) {
      if (statuses.includes((await app.request('GET', `${WF_BASE}/runs/${runId}`, { token: 'lk_wf_all' })).body.status)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`run ${runId} did not settle`);
  }

  it('counts a definition\'s runs by UTC creation day', async () => {
    // Two parked runs (two failed attempts each), one cancelled while parked, and one run of another definition.
    const parked = await start({ workflowName: 'flaky' });
    const cancelled = await start({ workflowName: 'flaky' });
    await until(parked, ['suspended']);
    await until(cancelled, ['suspended']);
    expect((await app.request('POST', `${WF_BASE}/runs/${cancelled}/cancel`, { token: 'lk_wf_all' })).body.status).toBe('cancelled');
    await until(await start({ workflowName: 'nightly-report', input: { day: 'd' } }), ['completed']);

    const before = Date.now();
    const res = await rollup('wf_flaky', `?from=${before - DAY}&to=${before + 1000}`);
    expect(res.status).toBe(200);
    const today = new Date(before).toISOString().slice(0, 10);
    expect(res.body).toEqual({
      workflowId: 'wf_flaky', bucket: 'day', from: before - DAY, to: before + 1000,
      rows: [{ date: today, runs: 2, completed: 0, failed: 0, cancelled: 1, suspended: 1, p50DurationMs: expect.any(Number), p95DurationMs: expect.any(Number), creditsTotal: 0, stepFailures: 4 }],
    });
    const report = await rollup('wf_report', `?from=${before - DAY}&to=${before + 1000}`);
    expect(report.body.rows).toEqual([{ date: today, runs: 1, completed: 1, failed: 0, cancelled: 0, suspended: 0, p50DurationMs: expect.any(Number), p95DurationMs: expect.any(Number), creditsTotal: 0, stepFailures: 0 }]);
    // ISO 8601 bounds too; a day without runs has no row.
    const iso = await rollup('wf_flaky', `?from=${new Date(before - 3 * DAY).toISOString()}&to=${new Date(before - 2 * DAY).toISOString()}`);
    expect(iso.body).toMatchObject({ from: before - 3 * DAY, to: before - 2 * DAY, rows: [] });
  });

  it('gives null percentiles on a day without a terminal run', async () => {
    const runId = await start({ workflowName: 'draft-only', workflowVersionId: 'wfv_draft_1' });
    await until(runId, ['completed']);
    // wf_slow: one run, still sleeping.
    const slow = await start({ workflowName: 'slow' });
    await until(slow, ['running']);
    const res = await rollup('wf_slow', `?from=${Date.now() - DAY}&to=${Date.now() + 1000}`);
    expect(res.body.rows).toEqual([expect.objectContaining({ runs: 1, completed: 0, p50DurationMs: null, p95DurationMs: null })]);
  });

  it('defaults to the 30 days before now, and keeps an answer 60 seconds', async () => {
    const first = await rollup('wf_script');
    expect(first.status).toBe(200);
    expect(first.body.to - first.body.from).toBe(30 * DAY);
    expect(Math.abs(first.body.to - Date.now())).toBeLessThan(5000);
    expect(first.body.rows).toEqual([]);
    await until(await start({ workflowName: 'scripted' }), ['completed']);
    expect((await rollup('wf_script')).body).toEqual(first.body);
    // Another query is computed afresh.
    expect((await rollup('wf_script', `?to=${Date.now() + 1000}`)).body.rows).toEqual([expect.objectContaining({ runs: 1, completed: 1 })]);
  });

  it('refuses a range over 90 days with ROLLUP_RANGE_TOO_WIDE, and malformed bounds with VALIDATION_FAILED', async () => {
    const wide = await rollup('wf_report', `?from=0&to=${90 * DAY + 1}`);
    expect(wide.status).toBe(400);
    expect(wide.body).toEqual({ statusCode: 400, code: 'ROLLUP_RANGE_TOO_WIDE', message: 'The rollup range is 91 days; at most 90 days may be asked for', maxDays: 90, days: 91 });
    expect((await rollup('wf_report', `?from=0&to=${90 * DAY}`)).status).toBe(200);
    const bad = await rollup('wf_report', '?from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ path: 'from', constraint: 'format', message: 'from must be Unix milliseconds or an ISO 8601 date-time' }]);
    const order = await rollup('wf_report', '?from=2000&to=1000');
    expect(order.body.details).toEqual([{ path: 'from', constraint: 'maximum', message: 'from must not be after to' }]);
    // Years the store has no timestamp for (each was a 500), and days the calendar lacks (were rolled over).
    for (const [query, message] of [
      ['?from=0000-01-01&to=0', 'from must lie between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z'],
      ['?from=0001-01-01T00:00:00Z&to=0', 'from must lie between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z'],
      ['?to=253402300800000', 'to must lie between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z'],
      ['?from=2026-02-30T00:00:00Z', 'from must be Unix milliseconds or an ISO 8601 date-time'],
    ] as const) {
      const res = await rollup('wf_report', query);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toMatchObject({ code: 'VALIDATION_FAILED', field: query.includes('from') ? 'from' : 'to', details: [{ message }] });
    }
  });

  it('answers 404 WORKFLOW_NOT_FOUND for another agent\'s definition, and needs workflows:read', async () => {
    const other = await rollup('wf_other');
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ statusCode: 404, code: 'WORKFLOW_NOT_FOUND', message: 'No workflow with id wf_other for agent agt_support', workflowId: 'wf_other' });
    expect((await rollup('wf_report', '', 'lk_wf_none')).body).toMatchObject({ statusCode: 403, code: 'INSUFFICIENT_SCOPE', requiredScope: 'workflows:read' });
  });
});
