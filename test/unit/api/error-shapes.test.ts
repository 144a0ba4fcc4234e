/**
 * One error, each family's body (spec 01, 02 and 03 part 7), and both 429
 * styles of the rate-limit buckets (spec 01 part 8, spec 03 part 8).
 */
import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { KernelErrors } from '../../../src/api/kernel/error-registry.js';
import { renderError } from '../../../src/api/kernel/error-shapes.js';
import { createRateLimiter, type Bucket } from '../../../src/api/kernel/rate-limit.js';
import { TemplateErrors } from '../../../src/modules/templates/errors.js';

describe('error shapes', () => {
  const invalid = KernelErrors.VALIDATION_FAILED('name must be 1-64 characters', { field: 'name', message: ['name must be 1-64 characters', 'name must not be empty'] });

  it('renders spec 01, spec 02, the workflow and the template shapes from one error', () => {
    // Spec 01: the details' message (the array of failed rules) is the body's message.
    expect(renderError(invalid)).toEqual({
      statusCode: 400, error: 'Bad Request', code: 'VALIDATION_FAILED', field: 'name', message: ['name must be 1-64 characters', 'name must not be empty'],
    });
    expect(renderError(invalid, 'telephony')).toEqual({ statusCode: 400, error: 'Bad Request', message: ['name must be 1-64 characters', 'name must not be empty'] });
    const notFound = KernelErrors.RESOURCE_NOT_PROJECTED('The agent a is not visible to this credential.', { resourceType: 'agent' });
    // Spec 01's platform answers keep their code on the telephony routes (contract telephony T2, T3).
    expect(renderError(notFound, 'telephony')).toEqual({
      statusCode: 403, error: 'Forbidden', code: 'RESOURCE_NOT_PROJECTED', message: 'The agent a is not visible to this credential.', resourceType: 'agent',
    });
    expect(renderError(KernelErrors.INSUFFICIENT_SCOPE('This credential lacks the telephony:read scope.', { requiredScope: 'telephony:read' }), 'telephony')).toMatchObject({
      statusCode: 403, code: 'INSUFFICIENT_SCOPE', message: 'Insufficient permissions for this organization',
    });
    const withDetails = KernelErrors.VALIDATION_FAILED('input is invalid', { details: [{ path: '/input/a', constraint: 'type', message: 'must be a string' }] });
    expect(renderError(withDetails, 'workflows')).toEqual({ statusCode: 400, message: 'input is invalid', code: 'VALIDATION_FAILED', details: [{ path: '/input/a', constraint: 'type', message: 'must be a string' }] });
    // Spec 01 part 7.1.1 (channel sends): 400 and 404 bare, the rules as the message; a denial keeps its code.
    expect(renderError(invalid, 'framework')).toEqual({ statusCode: 400, error: 'Bad Request', message: ['name must be 1-64 characters', 'name must not be empty'] });
    expect(renderError(KernelErrors.VALIDATION_FAILED('one rule', {}), 'framework')).toEqual({ statusCode: 400, error: 'Bad Request', message: 'one rule' });
    expect(renderError(notFound, 'framework')).toEqual({
      statusCode: 403, error: 'Forbidden', code: 'RESOURCE_NOT_PROJECTED', message: 'The agent a is not visible to this credential.', resourceType: 'agent',
    });
    expect(renderError(KernelErrors.PAYLOAD_TOO_LARGE('too big', { field: 'body', max: 10 }), 'templates')).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'too big', field: 'body', max: 10 });
  });

  it('answers a route with the shape it declares', async () => {
    const app = Fastify();
    const { installErrorHandler } = await import('../../../src/api/kernel/errors.js');
    installErrorHandler(app);
    app.get('/phone', { config: { errorShape: 'telephony' } }, async () => {
      throw invalid;
    });
    app.get('/drain', async () => {
      throw invalid;
    });
    expect((await app.inject('/phone')).json()).toEqual({ statusCode: 400, error: 'Bad Request', message: ['name must be 1-64 characters', 'name must not be empty'] });
    expect((await app.inject('/drain')).json()).toMatchObject({ code: 'VALIDATION_FAILED', field: 'name' });
    await app.close();
  });
});

describe('rate-limit 429 styles', () => {
  const store = () => {
    const hits = new Map<string, number>();
    return { rateLimits: { hit: async (name: string, subject: string, windowMs: number, nowMs: number) => {
      const k = `${name}/${subject}/${Math.floor(nowMs / windowMs)}`;
      hits.set(k, (hits.get(k) ?? 0) + 1);
      return { hits: hits.get(k)!, windowStartMs: Math.floor(nowMs / windowMs) * windowMs };
    }, sweep: async () => 0 } } as never;
  };
  async function answer(bucket: Bucket, times: number) {
    const app = Fastify();
    const { installErrorHandler } = await import('../../../src/api/kernel/errors.js');
    installErrorHandler(app);
    const limiter = createRateLimiter(store());
    app.get('/x', { config: { errorShape: bucket.style === 'named' ? 'workflows' : bucket.style === 'plain' ? 'templates' : 'conventions' } }, async (_req, reply) => {
      await limiter.enforce(bucket, 'subject', reply, 30_000);
      return { ok: true };
    });
    let last;
    for (let i = 0; i < times; i++) last = await app.inject('/x');
    await app.close();
    return last!;
  }

  it('suffixed: budget headers on every answer, a bare Retry-After on the 429', async () => {
    const res = await answer({ name: 'log-drains-read', limit: 2, windowMs: 60_000, error: KernelErrors.RATE_LIMITED }, 3);
    expect(res.statusCode).toBe(429);
    expect(res.headers['x-ratelimit-limit-log-drains-read']).toBe('2');
    expect(res.headers['retry-after']).toBe('30');
    expect(res.json()).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 30 });
  });

  it('named: Retry-After and Retry-After-<bucket>, the body naming the bucket, its limit and window', async () => {
    const res = await answer({ name: 'wf-start', limit: 2, windowMs: 60_000, error: KernelErrors.RATE_LIMITED, style: 'named' }, 3);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.headers['retry-after-wf-start']).toBe('30');
    expect(res.headers['x-ratelimit-limit-wf-start']).toBeUndefined();
    expect(res.json()).toEqual({ statusCode: 429, code: 'RATE_LIMITED', message: expect.any(String), retryAfterSeconds: 30, bucket: 'wf-start', limit: 2, windowSeconds: 60 });
  });

  it('plain: only Retry-After, the body only {statusCode: 429, message} whatever the route\'s shape', async () => {
    const res = await answer({ name: 'templates-catalog-list', limit: 2, windowMs: 60_000, error: TemplateErrors.TEMPLATE_CATALOG_RATE_LIMITED, style: 'plain', message: () => 'Too many catalog requests; retry later.' }, 3);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.headers['x-ratelimit-limit-templates-catalog-list']).toBeUndefined();
    expect(res.headers['retry-after-templates-catalog-list']).toBeUndefined();
    expect(res.json()).toEqual({ statusCode: 429, message: 'Too many catalog requests; retry later.' });
  });
});

describe('the templates envelope', () => {
  it('answers a family code as {code, message, ...fields}, a validation failure in the framework shape, spec 01 denials in spec 01\'s', () => {
    expect(renderError(TemplateErrors.CONTENT_HASH_MISMATCH('changed', { reason: 'seal-mismatch' }), 'templates')).toEqual({ code: 'CONTENT_HASH_MISMATCH', message: 'changed', reason: 'seal-mismatch' });
    expect(renderError(KernelErrors.VALIDATION_FAILED('a; b', { field: 'name', message: ['a', 'b'] }), 'templates')).toEqual({ statusCode: 400, error: 'Bad Request', message: ['a', 'b'] });
    expect(renderError(KernelErrors.INSUFFICIENT_SCOPE('lacks', { requiredScope: 'automations:write' }), 'templates')).toEqual({
      statusCode: 403, error: 'Forbidden', code: 'INSUFFICIENT_SCOPE', message: 'lacks', requiredScope: 'automations:write',
    });
  });
});
