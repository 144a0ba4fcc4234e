/**
 * The kernel's store-outage rule (kernel/store-outage.ts) on a bare fastify app: an error the
 * store's client raised for an unreachable server answers 503 on any route, in the route's shape;
 * `retryAfterSeconds` and `Retry-After` by the route's declaration (reads safe, writes only with
 * their idempotency key, an undeclared write unsafe); the family's own answer where it declares
 * one; a write declaring itself safe without a key is refused when it registers. The same error
 * not raised by the store stays a 500.
 */
import { describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { installErrorHandler } from '../../../src/api/kernel/errors.js';
import { installStoreOutage, keyedByHeader, keyedInBody, drainingAnswer } from '../../../src/api/kernel/store-outage.js';
import { withStoreErrorsMarked } from '../../../src/store/unavailable.js';
import { AppError } from '../../../src/errors.js';
import type { Sql } from '../../../src/store/sql.js';

/** A store whose every statement fails as a refused connection does, through openStore's marking. */
const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const downStore = withStoreErrorsMarked({
  kind: 'postgres',
  query: async () => { throw refused(); },
  exec: async () => { throw refused(); },
  transaction: async () => { throw refused(); },
  listen: async () => { throw refused(); },
  close: async () => {},
} as unknown as Sql);
const storeDown = () => downStore.query('select 1');

async function appWith(register: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const app = Fastify();
  installErrorHandler(app);
  installStoreOutage(app);
  register(app);
  await app.ready();
  return app;
}

describe('a store outage, one rule for every route', () => {
  it('answers reads 503 UPSTREAM_UNAVAILABLE with retryAfterSeconds and Retry-After, in the route\'s shape', async () => {
    const app = await appWith((a) => {
      a.get('/drains', storeDown);
      a.get('/runs', { config: { errorShape: 'workflows' } }, storeDown);
      a.get('/trunks', { config: { errorShape: 'telephony' } }, storeDown);
    });
    const drains = await app.inject('/drains');
    expect(drains.statusCode).toBe(503);
    expect(drains.headers['retry-after']).toBe('1');
    expect(drains.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', code: 'UPSTREAM_UNAVAILABLE', message: expect.any(String), retryAfterSeconds: 1 });
    expect((await app.inject('/runs')).json()).toEqual({ statusCode: 503, code: 'UPSTREAM_UNAVAILABLE', message: expect.any(String), retryAfterSeconds: 1 });
    expect((await app.inject('/trunks')).json()).toEqual({ statusCode: 503, error: 'Service Unavailable', code: 'UPSTREAM_UNAVAILABLE', message: expect.any(String), retryAfterSeconds: 1 });
    await app.close();
  });

  it('answers an undeclared write 503 without either, and a keyed write with them only when the key is there', async () => {
    const app = await appWith((a) => {
      a.post('/drains', storeDown);
      a.post('/send', { config: { blindRetry: keyedByHeader('x-idempotency-key') } }, storeDown);
      a.delete('/drains/d', { config: { blindRetry: 'unsafe' } }, storeDown);
    });
    for (const url of ['/drains', '/send']) {
      const res = await app.inject({ method: 'POST', url, payload: {} });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBeUndefined();
      expect(res.json()).toEqual({ statusCode: 503, error: 'Service Unavailable', code: 'UPSTREAM_UNAVAILABLE', message: expect.stringContaining('may have been applied') });
    }
    expect((await app.inject({ method: 'DELETE', url: '/drains/d' })).json()).not.toHaveProperty('retryAfterSeconds');
    const keyed = await app.inject({ method: 'POST', url: '/send', payload: {}, headers: { 'x-idempotency-key': 'k1' } });
    expect(keyed.headers['retry-after']).toBe('1');
    expect(keyed.json()).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryAfterSeconds: 1 });
    // Another family's header is not this route's key.
    expect((await app.inject({ method: 'POST', url: '/send', payload: {}, headers: { 'idempotency-key': 'k1' } })).headers['retry-after']).toBeUndefined();
    await app.close();
  });

  it('takes a key in the body as found once the body is read; a request stopped before its body was read ran nothing', async () => {
    const inBody = keyedInBody((body) => typeof (body as { key?: unknown }).key === 'string');
    const app = await appWith((a) => {
      a.post('/batch', { config: { blindRetry: inBody } }, storeDown);
      // As the access kernel does: a store lookup before the body is read.
      a.post('/early', { config: { blindRetry: inBody }, onRequest: async () => { await storeDown(); } }, async () => ({}));
    });
    expect((await app.inject({ method: 'POST', url: '/batch', payload: { key: 'k' } })).headers['retry-after']).toBe('1');
    expect((await app.inject({ method: 'POST', url: '/batch', payload: { other: 1 } })).headers['retry-after']).toBeUndefined();
    const early = await app.inject({ method: 'POST', url: '/early', payload: { other: 1 } });
    expect(early.statusCode).toBe(503);
    expect(early.headers['retry-after']).toBe('1');
    await app.close();
  });

  it('answers with the family\'s own code where it declares one, given whether a retry is safe', async () => {
    const own = (retryAfterSeconds: number | undefined) => new AppError(503, 'CONTROL_UNAVAILABLE', retryAfterSeconds ? 'retry' : 'read first', retryAfterSeconds ? { retryAfterSeconds } : {});
    const app = await appWith((a) => {
      const config = { errorShape: 'workflows' as const, storeUnavailable: own };
      a.post('/runs', { config: { ...config, blindRetry: keyedByHeader('idempotency-key') } }, storeDown);
      a.post('/runs/r/cancel', { config }, storeDown);
    });
    const start = await app.inject({ method: 'POST', url: '/runs', payload: {}, headers: { 'idempotency-key': 'k' } });
    expect(start.headers['retry-after']).toBe('1');
    expect(start.json()).toEqual({ statusCode: 503, code: 'CONTROL_UNAVAILABLE', message: 'retry', retryAfterSeconds: 1 });
    const cancel = await app.inject({ method: 'POST', url: '/runs/r/cancel', payload: {} });
    expect(cancel.headers['retry-after']).toBeUndefined();
    expect(cancel.json()).toEqual({ statusCode: 503, code: 'CONTROL_UNAVAILABLE', message: 'read first' });
    await app.close();
  });

  it('leaves the same error raised elsewhere (a client\'s own socket) a 500', async () => {
    const app = await appWith((a) => a.get('/x', async () => { throw refused(); }));
    const res = await app.inject('/x');
    expect(res.statusCode).toBe(500);
    expect(res.headers['retry-after']).toBeUndefined();
    await app.close();
  });

  it('refuses a write that declares a blind retry safe without a key', async () => {
    await expect(appWith((a) => a.post('/drains', { config: { blindRetry: 'safe' } }, storeDown))).rejects.toThrow(/ROUTE_RETRY_UNSAFE|safe to repeat only by its idempotency key/);
    const reads = await appWith((a) => a.get('/drains', { config: { blindRetry: 'safe' } }, storeDown));
    await reads.close();
  });

  it('renders CORE_DRAINING as spec 01 part 7.1.5 gives it', () => {
    const a = drainingAnswer();
    expect(a.status).toBe(503);
    expect(a.headers['retry-after']).toBe('1');
    expect(JSON.parse(a.body)).toEqual({ error: { code: 'CORE_DRAINING', message: expect.any(String), retryable: true } });
  });
});
