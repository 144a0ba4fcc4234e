/**
 * The RCS bulk capability check's cost bounds (spec 02 part 4.3; docs/api-telephony.md): the count
 * is answered before any entry is read, the syntax of every entry before any numbering-plan check,
 * and each organization has a budget of checks a minute (RCS_BULK_CHECKS_PER_MIN, here its
 * default). Through HTTP against the started service; that the numbering-plan checks give the event
 * loop back is test/unit/modules/telephony/bulk-list.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../../helpers/api-app.js';
import { startTelephonyApi } from '../../../helpers/telephony.js';

const ACME = '/developer/orgs/org_acme/rcs-agents';
const GLOBEX = '/developer/orgs/org_globex/rcs-agents';
const BUCKET = 'rcs-bulk-capability-check';

/** Starts at the beginning of a minute window so the requests of a test fall in one. */
async function intoFreshWindow(): Promise<void> {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 40_000) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 50));
}

describe('RCS bulk capability check bounds', () => {
  let app: TestApi;
  let acme: string;
  let globex: string;
  let seq = 0;
  const liveAgent = async (path: string, token: string): Promise<string> => {
    const res = await app.request('POST', path, { token, body: { senderId: `bulk-${++seq}-${Date.now()}`, displayName: 'Bulk' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await app.request('PATCH', `${path}/${res.body.id}`, { token, body: { status: 'live' } })).status).toBe(200);
    return res.body.id as string;
  };
  beforeAll(async () => {
    app = await startTelephonyApi();
    acme = await liveAgent(ACME, 'lk_tel_all');
    globex = await liveAgent(GLOBEX, 'lk_globex_tel');
  });
  afterAll(async () => {
    await app?.stop();
  });
  const bulk = (phoneNumbers: unknown, base = `${ACME}/${acme}`, token = 'lk_tel_all') =>
    app.request('POST', `${base}/bulk-capability-check`, { token, body: { phoneNumbers } });

  it('answers a count out of range before reading any entry, and a malformed entry before any numbering-plan check', async () => {
    const numbers = Array.from({ length: 10_001 }, (_, i) => `+1415${String(5550000 + i)}`);
    numbers[0] = 'not a number';
    const res = await bulk(numbers);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: ['phoneNumbers must contain 500 to 10,000 numbers'] });
    // Entry 0 reads as E.164 but no numbering plan allows it; entry 599 is not even `+` and digits:
    // the syntax pass answers 599 without checking any entry against a numbering plan.
    const list = Array.from({ length: 600 }, (_, i) => `+1415${String(5550000 + i)}`);
    list[0] = '+1415';
    list[599] = '+1 415 555 0000';
    expect((await bulk(list)).body.message).toEqual(['phoneNumbers.599 must be an E.164 phone number (+ and digits)']);
    list[599] = '+14155550599';
    expect((await bulk(list)).body.message).toEqual(['phoneNumbers.0 must be an E.164 phone number (+ and digits)']);
  });

  it('counts each organization\'s checks: past its budget a minute, 429 RATE_LIMITED with Retry-After; other organizations unaffected', async () => {
    await intoFreshWindow();
    const first = await bulk([], `${GLOBEX}/${globex}`, 'lk_globex_tel');
    expect(first.status).toBe(400);
    const limit = Number(first.headers.get(`x-ratelimit-limit-${BUCKET}`));
    expect(limit).toBe(10);
    let remaining = Number(first.headers.get(`x-ratelimit-remaining-${BUCKET}`));
    while (remaining > 0) {
      const res = await bulk([], `${GLOBEX}/${globex}`, 'lk_globex_tel');
      expect(res.status).toBe(400);
      remaining = Number(res.headers.get(`x-ratelimit-remaining-${BUCKET}`));
    }
    const over = await bulk(Array.from({ length: 500 }, (_, i) => `+1415${String(5551000 + i)}`), `${GLOBEX}/${globex}`, 'lk_globex_tel');
    expect(over.status).toBe(429);
    expect(over.body).toEqual({
      statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED',
      message: 'RCS bulk capability check rate limit exceeded for organization org_globex (10/min)', retryAfterSeconds: expect.any(Number),
    });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(over.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Acme's budget is its own; Globex's other routes are not counted in it.
    expect((await bulk(Array.from({ length: 500 }, (_, i) => `+1415${String(5552000 + i)}`))).status).toBe(201);
    expect((await app.request('POST', `${GLOBEX}/${globex}/capability-check`, { token: 'lk_globex_tel', body: { phoneNumber: '+14155550122' } })).status).toBe(201);
  });
});
