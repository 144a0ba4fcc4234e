/**
 * The wf-* rate-limit buckets of spec 03 part 8 at their spec values (contract W7): counted per
 * calling user (a key counts against its owner), one-minute windows, the 429 body and the
 * Retry-After and Retry-After-wf-<name> headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startWorkflowsApi, WF_BASE } from '../../../helpers/workflows.js';

describe('workflow rate limits', () => {
  let app: TestApi;
  beforeAll(async () => {
    app = await startWorkflowsApi();
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** The counts are per fixed minute: a test starts early in one, so its requests share a window. */
  async function freshWindow(): Promise<void> {
    const into = Date.now() % 60_000;
    if (into > 40_000) await new Promise((r) => setTimeout(r, 60_000 - into + 50));
  }

  it('allows 30 starts a minute per user, then answers 429 RATE_LIMITED naming wf-start', async () => {
    await freshWindow();
    const body = { workflowName: 'nightly-report', input: { day: 'd' } };
    // Ann's key and Ann's session count in one budget.
    for (let i = 0; i < 30; i++) {
      const res = await app.request('POST', `${WF_BASE}/runs`, { token: i % 2 === 0 ? 'lk_wf_all' : 'sess_ann', body });
      expect(res.status, `start ${i + 1}`).toBe(202);
    }
    const refused = await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_exec', body });
    expect(refused.status).toBe(429);
    const retry = refused.body.retryAfterSeconds;
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(refused.body).toEqual({
      statusCode: 429, code: 'RATE_LIMITED', message: `Rate limit of 30 requests a minute exceeded; retry in ${retry} s.`,
      retryAfterSeconds: retry, bucket: 'wf-start', limit: 30, windowSeconds: 60,
    });
    expect(refused.headers.get('retry-after')).toBe(String(retry));
    expect(refused.headers.get('retry-after-wf-start')).toBe(String(retry));
    // Another user's budget is their own; reads are another bucket.
    expect((await app.request('POST', `${WF_BASE}/runs`, { token: 'lk_wf_max', body })).status).toBe(202);
    expect((await app.request('GET', `${WF_BASE}/runs`, { token: 'lk_wf_all' })).status).toBe(200);
  }, 90_000);

  it('counts cancels in wf-mutate: 60 a minute', async () => {
    await freshWindow();
    for (let i = 0; i < 60; i++) {
      const res = await app.request('POST', `${WF_BASE}/runs/wfr_none/cancel`, { token: 'lk_wf_max' });
      expect(res.status, `cancel ${i + 1}`).toBe(404);
    }
    const refused = await app.request('POST', `${WF_BASE}/runs/wfr_none/cancel`, { token: 'sess_max' });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', bucket: 'wf-mutate', limit: 60, windowSeconds: 60 });
    expect(refused.headers.get('retry-after-wf-mutate')).toBe(String(refused.body.retryAfterSeconds));
  }, 90_000);
});
