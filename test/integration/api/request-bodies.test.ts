/**
 * Request bodies on every family's routes, as the kernel's parser reads them
 * (src/api/kernel/json-body.ts): nesting refused at its bound with the field's
 * path before anything recurses over it (validation, the idempotency
 * fingerprint, storage), bytes that are not UTF-8 refused naming the field,
 * `__proto__` keys named, other media types and charsets answered 415; the
 * ingest route's own bodies under the same rules; drain names that display as
 * nothing refused for every such code point.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../../src/server.js';
import { loadConfig } from '../../../src/config/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { familyMigrations } from '../../../src/modules/index.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../src/seed/seed-file.js';
import { applySeed } from '../../../src/seed/apply.js';
import { MAX_BODY_DEPTH } from '../../../src/api/kernel/json-body.js';
import { SEED_FIXTURE, TEST_MODE } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { record } from '../../helpers/records.js';

const DRAINS = '/admin/orgs/org_acme/log-drains';
const M = { authorization: 'Bearer lk_acme_manage' };
const I = { authorization: 'Bearer lk_acme_ingest' };
/** A key acting as its user, an admin of org_acme: every family's routes on the organization's agents. */
const ADMIN = { authorization: 'Bearer lk_acme_legacy' };
const JSON_TYPE = { 'content-type': 'application/json' };

/** `{"a":{"a":...1...}}` nested `levels` deep, as text. */
const deepObject = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
/** The path the parser names for a value of `field` nested past the bound: the field, then `a` until the bound. */
const deepPath = (field: string): string => [...field.split('.'), ...Array<string>(MAX_BODY_DEPTH - field.split('.').length).fill('a')].join('.');

describe('request bodies', () => {
  let app: FastifyInstance;
  let store: Store;
  let db: TestDatabase | undefined;

  beforeAll(async () => {
    const config = loadConfig({ DATA_DIR: 'memory://', DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', DRAIN_RATE_LIMIT_READ_PER_MIN: '1000000', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '1000000' });
    if (TEST_MODE === 'kafka-postgres') db = await createTestDatabase();
    store = await openStore(db ? { databaseUrl: db.url, maxConnections: 4, migrations: familyMigrations } : { dataDir: 'memory://', migrations: familyMigrations });
    await applySeed(store.sql, await readSeedFile(SEED_FIXTURE));
    app = await buildApi({ config, store, logger: silentLogger(), metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await db?.drop();
  });

  const send = (method: 'POST' | 'PATCH' | 'PUT', url: string, headers: Record<string, string>, payload: string | Buffer) =>
    app.inject({ method, url, headers, payload });

  describe('nesting', () => {
    // Each family's free-form fields, nested past where recursion over them overflowed the stack
    // (about 4,500 levels; about 3,000 with an idempotency key, whose fingerprint serialises the body).
    const CASES: { what: string; url: string; method?: 'POST' | 'PUT'; body: (deep: string) => string; field: string; headers?: Record<string, string> }[] = [
      { what: 'a workflow start\'s input', url: '/workflows/agt_support/runs', body: (d) => `{"workflowName":"nightly-report","input":${d}}`, field: 'input' },
      { what: 'a workflow start\'s input, with an idempotency key', url: '/workflows/agt_support/runs', body: (d) => `{"workflowName":"nightly-report","input":${d}}`, field: 'input', headers: { 'idempotency-key': 'deep-1' } },
      { what: 'a workflow start\'s stateSeed', url: '/workflows/agt_support/runs', body: (d) => `{"workflowName":"nightly-report","stateSeed":${d}}`, field: 'stateSeed' },
      { what: 'a workflow start\'s inline graph', url: '/workflows/agt_support/runs', body: (d) => `{"graph":{"steps":[],"extra":${d}}}`, field: 'graph.extra' },
      { what: 'a batch start\'s input', url: '/workflows/agt_support/runs/batch', body: (d) => `{"runs":[{"workflowName":"nightly-report","input":${d}}]}`, field: 'runs.0.input' },
      { what: 'a voice version\'s llm.options', url: '/developer/voice-agents/agt_support/vc_1/version', body: (d) => `{"llm":{"kind":"plugin","provider":"speech-a","class":"LLM","options":${d}}}`, field: 'llm.options' },
      { what: 'a voice dispatch\'s context', url: '/developer/voice-agents/agt_support/dispatch', body: (d) => `{"to":"+14155550100","context":${d}}`, field: 'context' },
      { what: 'a drain\'s redact list', url: DRAINS, body: (d) => `{"name":"deep","type":"http","redact":${d}}`, field: 'redact' },
    ];

    it.each(CASES)('refuses $what nested 5,000 deep with 400 naming its path, in the family shape', async ({ url, method, body, field, headers }) => {
      const res = await send(method ?? 'POST', url, { ...(url === DRAINS ? M : ADMIN), ...JSON_TYPE, ...headers }, body(deepObject(5000)));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.body).toContain(`${deepPath(field)} nests deeper than ${MAX_BODY_DEPTH} levels`);
    });

    it('answers each family in its own shape', async () => {
      const workflow = await send('POST', '/workflows/agt_support/runs', { ...ADMIN, ...JSON_TYPE }, `{"workflowName":"w","input":${deepObject(5000)}}`);
      expect(workflow.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED', field: deepPath('input'), details: [{ path: deepPath('input'), constraint: 'maxDepth' }] });
      const drain = await send('POST', DRAINS, { ...M, ...JSON_TYPE }, `{"name":"deep","redact":${deepObject(5000)}}`);
      expect(drain.json()).toMatchObject({ statusCode: 400, code: 'DRAIN_VALIDATION_FAILED', field: 'redact' });
      const voice = await send('POST', '/developer/voice-agents/agt_support/vc_1/version', { ...ADMIN, ...JSON_TYPE }, `{"llm":{"options":${deepObject(5000)}}}`);
      expect(voice.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    });

    it('refuses the body itself nested past the bound (arrays too), a million deep, and takes a body at the bound', async () => {
      const arrays = await send('POST', DRAINS, { ...M, ...JSON_TYPE }, '['.repeat(500_000) + ']'.repeat(500_000));
      expect(arrays.statusCode).toBe(400);
      expect(arrays.json().message[0]).toContain(`nests deeper than ${MAX_BODY_DEPTH} levels`);
      // The body is level 1: its field may nest MAX_BODY_DEPTH - 1 levels and reach the schema.
      const atBound = await send('POST', '/workflows/agt_support/runs', { ...ADMIN, ...JSON_TYPE }, `{"workflowName":"no-such-workflow","input":${deepObject(MAX_BODY_DEPTH - 1)}}`);
      expect(atBound.json().code).not.toBe('VALIDATION_FAILED');
      const past = await send('POST', '/workflows/agt_support/runs', { ...ADMIN, ...JSON_TYPE }, `{"workflowName":"no-such-workflow","input":${deepObject(MAX_BODY_DEPTH)}}`);
      expect(past.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: deepPath('input') });
    });
  });

  describe('UTF-8', () => {
    const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

    it('refuses a drain name holding bytes that are not UTF-8, naming the field and the byte, and stores nothing', async () => {
      const before = (await app.inject({ method: 'GET', url: DRAINS, headers: M })).json().drains.length;
      for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]) {
        const body = bytes('{"type":"http","endpoint":"https://localhost:1/d","name":"caf', bad, '"}');
        const res = await send('POST', DRAINS, { ...M, ...JSON_TYPE }, body);
        expect(res.statusCode, JSON.stringify(bad)).toBe(400);
        expect(res.json()).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'name', message: [`name is not valid UTF-8 (byte ${body.indexOf(Buffer.from(bad))} of the body)`] });
      }
      expect((await app.inject({ method: 'GET', url: DRAINS, headers: M })).json().drains.length).toBe(before);
    });

    it('names the field of a bad byte in another family, and in a key', async () => {
      const res = await send('POST', '/workflows/agt_support/runs', { ...ADMIN, ...JSON_TYPE }, bytes('{"workflowName":"w","input":{"list":["ok","x', [0xfe], '"]}}'));
      expect(res.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED', field: 'input.list.1', details: [{ constraint: 'utf8' }] });
      const key = await send('POST', '/workflows/agt_support/runs', { ...ADMIN, ...JSON_TYPE }, bytes('{"workflowName":"w","input":{"k', [0x80], '":1}}'));
      expect(key.json().field).toBe('input.k\ufffd');
    });

    it('refuses an NDJSON record that is not UTF-8 on its own, and a JSON array body that is not as a whole', async () => {
      const good = JSON.stringify(record());
      // The bad byte sits inside the record's message: the line is otherwise well-formed.
      const [head, tail] = JSON.stringify(record({ message: 'ab#c' })).split('#') as [string, string];
      const line = Buffer.concat([Buffer.from(head), Buffer.from([0xff]), Buffer.from(tail)]);
      const ndjson = Buffer.concat([Buffer.from(`${good}\n`), line, Buffer.from(`\n${good}\n`)]);
      const res = await send('POST', '/internal/records', { ...I, 'content-type': 'application/x-ndjson' }, ndjson);
      expect(res.statusCode).toBe(202);
      expect(res.json()).toEqual({ accepted: 2, rejected: [{ index: 1, errors: [`not valid UTF-8 (byte ${line.indexOf(0xff)} of the record)`] }] });
      const array = Buffer.concat([Buffer.from(`[${good},`), line, Buffer.from(']')]);
      const whole = await send('POST', '/internal/records', { ...I, ...JSON_TYPE }, array);
      expect(whole.statusCode).toBe(400);
      expect(whole.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: 'body', message: `body is not valid UTF-8 (byte ${array.indexOf(0xff)})` });
    });
  });

  describe('media types', () => {
    const drain = JSON.stringify({ name: 'typed', type: 'http', endpoint: 'https://localhost:1/typed' });

    it('answers text/plain and other types 415 on every family, naming what the route reads', async () => {
      for (const [url, headers] of [[DRAINS, M], ['/workflows/agt_support/runs', ADMIN], ['/developer/voice-agents/agt_support/dispatch', ADMIN]] as const) {
        for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
          const res = await send('POST', url, { ...headers, 'content-type': type }, drain);
          expect(res.statusCode, `${url} ${type}`).toBe(415);
          expect(res.json()).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE', accepted: ['application/json'] });
        }
      }
      const ingest = await send('POST', '/internal/records', { ...I, 'content-type': 'text/plain' }, JSON.stringify([record()]));
      expect(ingest.statusCode).toBe(415);
      expect(ingest.json().accepted).toEqual(['application/x-ndjson', 'application/json']);
    });

    it('answers a charset other than UTF-8 415, and reads UTF-8 however it is written', async () => {
      for (const type of ['application/json; charset=utf-16', 'application/json;charset=UTF-16LE', 'application/json; charset="iso-8859-1"', 'application/json; charset=us-ascii']) {
        const res = await send('POST', DRAINS, { ...M, 'content-type': type }, drain);
        expect(res.statusCode, type).toBe(415);
        expect(res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', accepted: ['application/json'] });
        expect(res.json().message).toContain('UTF-8');
      }
      for (const type of ['application/x-ndjson; charset=utf-16', 'application/json; charset=latin1']) {
        const res = await send('POST', '/internal/records', { ...I, 'content-type': type }, JSON.stringify(record()));
        expect(res.statusCode, type).toBe(415);
      }
      const utf16 = await send('POST', DRAINS, { ...M, 'content-type': 'application/json; charset=utf-16le' }, Buffer.from(drain, 'utf16le'));
      expect(utf16.statusCode).toBe(415);
      for (const [i, type] of ['application/json; charset=UTF-8', 'application/json; charset="utf-8"', 'application/json'].entries()) {
        const res = await send('POST', DRAINS, { ...M, 'content-type': type }, JSON.stringify({ name: `typed-${i}`, type: 'http', endpoint: 'https://localhost:1/typed' }));
        expect(res.statusCode, `${type}: ${res.body}`).toBe(201);
        await app.inject({ method: 'DELETE', url: `${DRAINS}/${res.json().id}`, headers: M });
      }
    });
  });

  it('refuses a __proto__ key at any depth naming its path, and a constructor.prototype', async () => {
    const cases: [string, string][] = [
      ['{"name":"p","__proto__":{"admin":true}}', '__proto__'],
      ['{"name":"p","redact":[{"a":{"__proto__":{"x":1}}}]}', 'redact.0.a.__proto__'],
      ['{"name":"p","sampling":{"\\u005f_proto__":{}}}', 'sampling.__proto__'],
      ['{"name":"p","sampling":{"constructor":{"prototype":{"x":1}}}}', 'sampling.constructor.prototype'],
    ];
    for (const [body, path] of cases) {
      const res = await send('POST', DRAINS, { ...M, ...JSON_TYPE }, body);
      expect(res.statusCode, body).toBe(400);
      expect(res.json(), body).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: path.split('.')[0] });
      expect(res.json().message[0], body).toContain(`${path} is not allowed`);
    }
    const workflow = await send('POST', '/workflows/agt_support/runs', { ...ADMIN, ...JSON_TYPE }, '{"workflowName":"w","input":{"x":[1,{"__proto__":null}]}}');
    expect(workflow.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: 'input.x.1.__proto__', details: [{ constraint: 'forbiddenKey' }] });
    // A string value that reads __proto__ is no key.
    const value = await send('POST', DRAINS, { ...M, ...JSON_TYPE }, JSON.stringify({ name: '__proto__', type: 'http', endpoint: 'https://localhost:1/p' }));
    expect(value.statusCode, value.body).toBe(201);
    await app.inject({ method: 'DELETE', url: `${DRAINS}/${value.json().id}`, headers: M });
  });

  it('refuses drain names made only of characters that display as nothing, for every such kind of code point', async () => {
    const invisible = [
      '\u115f', '\u1160', '\u3164', '\uffa0', // Hangul fillers
      '\u2800', // Braille blank
      '\u034f', '\ufe0f', '\u17b4', '\u180e', '\u00ad', '\u200b\u200c\u200d', '\u2060', '\ufeff', // default-ignorable
      '\u{e0001}\u{e0041}\u{e007f}', // tag characters
      '\u2028', '\u2029', '\u3000', '\u00a0', ' \t', // white space
      '\uffff', '\ufffe', '\ufdd0', '\u{1fffe}', '\u{10ffff}', // noncharacters
      '\u3164\u200b \ufe0f\u2800', // a mix
    ];
    for (const name of invisible) {
      const res = await send('POST', DRAINS, { ...M, ...JSON_TYPE }, JSON.stringify({ name, type: 'http', endpoint: 'https://localhost:1/i' }));
      expect(res.statusCode, JSON.stringify(name)).toBe(400);
      expect(res.json()).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'name' });
    }
    // Such characters beside visible ones are text: an emoji with its variation selector, a Korean name.
    for (const name of ['\u2764\ufe0f', '\ud55c\uad6d', 'a\u200bb']) {
      const res = await send('POST', DRAINS, { ...M, ...JSON_TYPE }, JSON.stringify({ name, type: 'http', endpoint: 'https://localhost:1/v' }));
      expect(res.statusCode, `${JSON.stringify(name)}: ${res.body}`).toBe(201);
      await app.inject({ method: 'DELETE', url: `${DRAINS}/${res.json().id}`, headers: M });
    }
  });
});
