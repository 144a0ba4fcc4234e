/**
 * Route schemas as the source of truth: a request breaking its route's schema
 * never reaches the handler and is answered in the family's shape (spec 01's
 * conventions, spec 02's rule array, spec 03's workflow details[]); query
 * strings are coerced to the schema's types; an answer carries only the
 * fields its response schema names.
 */
import { afterAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { installSchemas, RULE } from '../../../src/api/kernel/schema.js';
import { installErrorHandler } from '../../../src/api/kernel/errors.js';
import { defineErrors } from '../../../src/api/kernel/error-registry.js';
import type { ErrorShape } from '../../../src/api/kernel/error-shapes.js';

const Own = defineErrors('schema-kernel-test', { OWN_VALIDATION_FAILED: { status: 400, fields: ['field'], when: 'test' } });

const Body = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 8, [RULE]: 'name must be a string of 1 to 8 characters' }),
    input: Type.Optional(Type.Object({ day: Type.Integer({ minimum: 1, maximum: 31 }) })),
    kind: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
  },
  { additionalProperties: false },
);

let handled = 0;
async function appWith(shape: ErrorShape): Promise<FastifyInstance> {
  const app = Fastify();
  installErrorHandler(app);
  installSchemas(app);
  const config = { errorShape: shape };
  app.post('/things', { schema: { body: Body, response: { 200: Type.Object({ name: Type.String() }, { additionalProperties: false }) } }, config }, async (req) => {
    handled += 1;
    // The secret is not in the response schema: the serializer leaves it out.
    return { ...(req.body as object), secret: 's3cr3t' };
  });
  app.get('/list', { schema: { querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }) }) }, config }, async (req) => ({ query: req.query }));
  app.post('/own', { schema: { body: Body }, config: { validationError: (issues) => Own.OWN_VALIDATION_FAILED(issues[0]!.message, { field: issues[0]!.path }) } }, async () => ({}));
  await app.ready();
  return app;
}

const apps: FastifyInstance[] = [];
afterAll(async () => Promise.all(apps.map((a) => a.close())));
const make = async (shape: ErrorShape) => {
  const app = await appWith(shape);
  apps.push(app);
  return app;
};

describe('schema kernel', () => {
  it('answers a broken body in spec 01 conventions, naming the field and every failed rule, without running the handler', async () => {
    const app = await make('conventions');
    const before = handled;
    const res = await app.inject({ method: 'POST', url: '/things', payload: { name: '', input: { day: 40 }, extra: 1 } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    expect(body.message).toEqual(expect.arrayContaining(['name must be a string of 1 to 8 characters', 'input.day must be <= 31', 'extra is not a known field']));
    expect(handled).toBe(before);
  });

  it('answers spec 02 style: message is the array of failed rules, no code', async () => {
    const app = await make('telephony');
    const res = await app.inject({ method: 'POST', url: '/things', payload: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: ['name is required'] });
  });

  it('answers the workflow shape with details[] {path, constraint, message}', async () => {
    const app = await make('workflows');
    const res = await app.inject({ method: 'POST', url: '/things', payload: { name: 'ok', input: { day: 'x' } } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
    expect(body.details).toEqual([{ path: 'input.day', constraint: 'type', message: 'input.day must be an integer' }]);
  });

  it('takes a route\'s own mapping of the failed rules', async () => {
    const app = await make('conventions');
    const res = await app.inject({ method: 'POST', url: '/own', payload: { name: 'far too long a name' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'OWN_VALIDATION_FAILED', field: 'name', message: 'name must be a string of 1 to 8 characters' });
  });

  it('coerces query parameters to the schema\'s types and fills defaults, and refuses what does not coerce', async () => {
    const app = await make('conventions');
    expect((await app.inject({ url: '/list?limit=20' })).json()).toEqual({ query: { limit: 20 } });
    expect((await app.inject({ url: '/list' })).json()).toEqual({ query: { limit: 10 } });
    const bad = await app.inject({ url: '/list?limit=ten' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: 'limit' });
  });

  it('checks a body as sent: a number in a string is not a number', async () => {
    const app = await make('workflows');
    const res = await app.inject({ method: 'POST', url: '/things', payload: { name: 'ok', input: { day: '5' } } });
    expect(res.statusCode).toBe(400);
  });

  it('sends only the fields the response schema names', async () => {
    const app = await make('conventions');
    const res = await app.inject({ method: 'POST', url: '/things', payload: { name: 'ok' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ name: 'ok' });
    expect(res.body).not.toContain('s3cr3t');
  });
});

describe('body schemas', () => {
  const attempt = async (register: (app: FastifyInstance) => void): Promise<void> => {
    const app = Fastify();
    installSchemas(app);
    try {
      register(app);
      await app.ready();
    } finally {
      await app.close();
    }
  };
  const guarded = { access: { resource: 'authenticated' as const } };

  it('refuses to register a guarded route that takes a body without a body schema', async () => {
    for (const method of ['post', 'put', 'patch'] as const) {
      await expect(attempt((app) => app[method]('/things', { config: guarded }, async () => ({})))).rejects.toThrow(/declares no body schema/);
    }
  });

  it('registers it with a body schema, or with the reason it has none; public routes and bodiless methods need neither', async () => {
    await expect(attempt((app) => app.post('/things', { schema: { body: Body }, config: guarded }, async () => ({})))).resolves.toBeUndefined();
    await expect(attempt((app) => app.post('/things', { config: { ...guarded, bodyUnchecked: 'takes no body' } }, async () => ({})))).resolves.toBeUndefined();
    await expect(attempt((app) => app.post('/hook', { config: { access: { resource: 'public' } } }, async () => ({})))).resolves.toBeUndefined();
    await expect(attempt((app) => app.get('/things', { config: guarded }, async () => ({})))).resolves.toBeUndefined();
    await expect(attempt((app) => app.post('/things', { config: { ...guarded, bodyUnchecked: ' ' } }, async () => ({})))).rejects.toThrow(/must say why/);
  });

  it('leaves a body the route checks itself to its own parser: its schema only documents it', async () => {
    const app = Fastify();
    installErrorHandler(app);
    installSchemas(app);
    app.post('/split', { schema: { body: Type.Array(Type.Object({})) }, config: { ...guarded, bodyUnchecked: 'split record by record' } }, async (req) => ({ got: req.body }));
    await app.ready();
    const res = await app.inject({ method: 'POST', url: '/split', payload: { not: 'an array' } });
    expect(res.statusCode).toBe(200);
    await app.close();
  });
});

describe('rule texts', () => {
  it('picks a text per keyword, names a null given, and says a repeated query parameter may be given once', async () => {
    const app = Fastify();
    installErrorHandler(app);
    installSchemas(app);
    const Tags = Type.Array(Type.String(), { maxItems: 2, [RULE]: { null: '{path} must not be null', maxItems: '{path} holds at most 2 entries', '*': '{path} must be an array' } });
    app.post('/tags', { schema: { body: Type.Object({ tags: Tags }) } }, async () => ({}));
    app.get('/q', { schema: { querystring: Type.Object({ limit: Type.Optional(Type.String({ pattern: '^\\d+$', [RULE]: 'limit must be digits' })) }) } }, async () => ({}));
    await app.ready();
    const rules = async (payload: unknown) => (await app.inject({ method: 'POST', url: '/tags', payload: payload as object })).json().message;
    expect(await rules({ tags: null })).toEqual(['tags must not be null']);
    expect(await rules({ tags: ['a', 'b', 'c'] })).toEqual(['tags holds at most 2 entries']);
    expect(await rules({ tags: 'a' })).toEqual(['tags must be an array']);
    expect((await app.inject('/q?limit=x')).json()).toMatchObject({ field: 'limit', message: ['limit must be digits'] });
    expect((await app.inject('/q?limit=1&limit=2')).json()).toMatchObject({ field: 'limit', message: ['limit may be given once'] });
    await app.close();
  });
});
