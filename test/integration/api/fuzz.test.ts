/**
 * Every REST route fuzzed (hostile input) with fast-check: random and
 * boundary path parameters, query strings and bodies, under valid, wrong and
 * malformed credentials. The routes are read from the served OpenAPI document
 * plus the operator routes, so a new route is fuzzed without editing this file.
 *
 * Every answer: never 5xx; no stack trace, internal path or `Error:` text in
 * its body or headers; every 4xx a JSON body of the spec 01 part 7.1 shape
 * `{statusCode, error, message}` (with `code` a string wherever one is given:
 * the spec's framework-shaped answers, 401 among them, carry none), or on the
 * workflow routes spec 03 part 7's `{statusCode, message, code}` (no `error`;
 * a 401 without `code`), or on the template routes spec 03 part 7's envelope
 * `{code, message, ...}` and the catalog's plain `429 {statusCode, message}`.
 * Each request comes from an address of its own, so the per-address catalog
 * budgets do not stop the runs at a 429.
 *
 * Runs through fastify.inject() (no sockets, so raw paths reach the router
 * as written); injection.test.ts covers what only a real socket can carry.
 * The seed is fixed so a failure replays; FUZZ_SEED / FUZZ_RUNS explore further.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApi } from '../../../src/server.js';
import { loadConfig } from '../../../src/config/config.js';
import { openStore, type Store } from '../../../src/store/store.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import { silentLogger } from '../../../src/telemetry/logger.js';
import { readSeedFile } from '../../../src/seed/seed-file.js';
import { applySeed } from '../../../src/seed/apply.js';
import { familyMigrations, familySeeds } from '../../../src/modules/index.js';
import { SEED_FIXTURE } from '../../helpers/app.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';
import { record } from '../../helpers/records.js';
import { LONE_SURROGATE } from '../../../src/model/record.js';
import { sampleOf, slotsOf, withValueAt, type Slot } from '../../helpers/schema-sample.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

/** Seeded credentials of org_acme (test/fixtures/seed-acme.json): an admin's legacy key and session, and scoped keys. */
const CREDENTIALS = ['lk_acme_legacy', 'sess_ann', 'lk_acme_manage', 'lk_acme_ingest', 'lk_acme_wild', 'lk_acme_receipts'];

/** Routes that the OpenAPI document leaves out on purpose (operator endpoints and the document itself). */
const UNDOCUMENTED: Route[] = [
  { method: 'GET', template: '/healthz', params: [], query: [] },
  { method: 'GET', template: '/readyz', params: [], query: [] },
  { method: 'GET', template: '/metrics', params: [], query: [] },
  { method: 'GET', template: '/docs/openapi.json', params: [], query: [] },
];

interface Route {
  method: string;
  template: string;
  params: string[];
  query: string[];
}

type Parameter = { in: string; name: string; schema?: Record<string, unknown>; description?: string };
type OpenApiDoc = { paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: unknown }> } }>> };

function routesOf(doc: OpenApiDoc): Route[] {
  const documented = Object.entries(doc.paths).flatMap(([template, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      params: [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
      query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    })),
  );
  const known = new Set(documented.map((r) => `${r.method} ${r.template}`));
  // DELETE last: it may remove the drain the other routes are fuzzed against.
  return [...documented, ...UNDOCUMENTED.filter((r) => !known.has(`${r.method} ${r.template}`))]
    .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

// ---- arbitraries -------------------------------------------------------------------------

/** Percent-encoding of any string: a lone surrogate (which a URL cannot carry) becomes U+FFFD first. */
const uriEncode = (v: string): string => encodeURIComponent(v.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD'));

/** Path segments as they would appear on the wire: boundary values written raw, arbitrary text percent-encoded. */
const segment = (real: string[]) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...real) },
    fc.constantFrom('', '.', '..', '%2e%2e', '%00', 'a%00b', '%2F', '..%2F..%2Fetc%2Fpasswd', '%', '%zz', '%C0%AF', '%E2%80%AE', '%F0%9F%98%80',
      '*', '~', 'org_acme%20', 'drn_', 'null', 'undefined', '__proto__', 'constructor', '0', '-1', 'x'.repeat(10_000)),
    fc.string({ unit: 'grapheme', maxLength: 40 }).map(encodeURIComponent),
    fc.string({ unit: 'binary', maxLength: 20 }).map(uriEncode),
  );

/** Strings of any code units, NUL, CR/LF, lone surrogates and BiDi controls among them. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\r\nX-Injected: 1', '\ud800', '\u202e', '\uffff', ' ', '😀'.repeat(50), '\u200b\u200b', '\u2066x\u2069'),
  // Long strings in every field that takes text: bounds must refuse them, never the store.
  fc.constantFrom('l'.repeat(300), 'l'.repeat(3_000), '€'.repeat(100), 'x'.repeat(100_000)),
);

/**
 * Cursors that decode: base64url of JSON pairs like the routes' own ([ISO time, id]) with any time
 * JavaScript can represent (years -271821 to 275760), any id, or any JSON at all.
 */
const cursor = fc
  .oneof(
    fc.tuple(fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms).toISOString()), text),
    fc.tuple(fc.oneof(fc.string(), fc.constantFrom('0', '1', '-1', '2026-02-30T00:00:00Z', '2026-11-23')), fc.oneof(text, fc.constant(''))),
    fc.jsonValue({ maxDepth: 2 }),
  )
  .map((pair) => Buffer.from(JSON.stringify(pair), 'utf8').toString('base64url'));

const queryValue = fc.oneof(
  cursor,
  fc.constantFrom('', '0', '-1', '1', '1.5', '100', '101', '1e309', '-1e309', 'NaN', 'Infinity', '99999999999999999999999', '0x10', ' 5',
    'true', 'false', 'null', 'batch', 'dropped', 'KIND', 'production', 'all', '15m', '7d', '-5m', '2026-11-20', '2026-13-45T99:99:99Z',
    '9999-12-31T23:59:59Z', '0000-01-01', '0000-12-31', '9999999w', '0001-01-01T00:00:00Z', '2026-02-30', '+275760-09-13T00:00:00Z', 'not-a-cursor', 'eyJ9', 'x'.repeat(5000), '%00', '\u0000', '😀', '\u202e'),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  text,
  fc.integer().map(String),
  fc.double().map(String),
);

const query = (names: string[]) =>
  fc
    .array(
      fc.tuple(
        fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...(names.length > 0 ? names : ['limit'])) },
          fc.constantFrom('limit[]', 'limit[0]', 'kind[a]', '__proto__', 'constructor', 'page', 'cursor', 'finalize', ''),
          fc.string({ maxLength: 10 }),
        ),
        queryValue,
      ),
      { maxLength: 6 },
    )
    .map((pairs) => pairs.map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`).join('&'));

/** JSON nested `depth` deep, arrays or objects. */
const deep = fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean()).map(([d, arr]) => (arr ? '['.repeat(d) + ']'.repeat(d) : '{"a":'.repeat(d) + '1' + '}'.repeat(d)));
/** Deep values where a route reads or copies a body: a drain field, or a field a record does not define. */
const deepInside = fc.oneof(
  fc.tuple(deep, fc.constantFrom('redact', 'agents', 'scrubRules', 'headers', 'sampling', 'reason', 'name')).map(([d, k]) => `{"${k}":${d}}`),
  deep.map((d) => `[${JSON.stringify(record()).slice(0, -1)},"extra":${d}}]`),
);

/** Each drain field with values of the right type, the wrong type, and boundary values. */
const drainFieldValues: Record<string, fc.Arbitrary<unknown>> = {
  name: fc.oneof(text, fc.constantFrom('', ' ', 'n'.repeat(65), 'a\r\nb', 'fuzzed'), fc.jsonValue()),
  type: fc.oneof(fc.constantFrom('http', 'otlp', 'vendor-a', 'vendor-b', 'HTTP', ''), fc.jsonValue()),
  // Never a host name that would need DNS, nor a public address: a drain created here may be sent a test batch.
  endpoint: fc.oneof(
    fc.constantFrom('https://localhost:1/x', 'http://localhost/x', 'https://[::1]/', 'https://10.0.0.1/', 'https://169.254.169.254/', 'https://%00/', 'https://localhost:99999/',
      'javascript:alert(1)', 'https://' + 'a'.repeat(3000), 'https://user:pw@localhost/x', 'https://localhost/\r\nX-Injected: 1', ''),
    fc.string({ maxLength: 30 }).map((path) => `https://localhost:1/${encodeURIComponent(path)}`),
    fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.constant('https://localhost:1/x')), fc.object()),
  ),
  site: fc.oneof(fc.constantFrom('us1', 'eu1', 'mars'), fc.jsonValue()),
  format: fc.oneof(fc.constantFrom('json', 'ndjson', 'xml'), fc.jsonValue()),
  headers: fc.oneof(fc.array(fc.record({ name: fc.oneof(text, fc.constantFrom('X-Ok', 'Host', 'X\r\nY', 'Expect', 'Upgrade', 'Keep-Alive', 'TE', 'Trailer', 'Proxy-Authorization', 'h'.repeat(65))), value: fc.oneof(text, fc.constantFrom('v\r\nX-Injected: 1', 'ok-value')) }), { maxLength: 12 }), fc.jsonValue()),
  secret: fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue(),
    fc.constantFrom('whsec_!!!!!!!!!!!!!!!!!!!!', 'whsec_AAAA', 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', `whsec_${'A'.repeat(200)}`, `whsec_${Buffer.alloc(32).toString('base64')}`, 'whsec_ AAAA====')),
  sources: fc.oneof(fc.array(text), fc.constant(['*']), fc.jsonValue()),
  minSeverity: fc.oneof(fc.constantFrom('debug', 'info', 'fatal'), fc.jsonValue()),
  agents: fc.oneof(fc.constant('*'), fc.array(fc.constantFrom('agt_support', 'agt_globex', '')), fc.jsonValue()),
  environments: fc.oneof(fc.array(fc.constantFrom('production', 'sandbox', 'staging')), fc.jsonValue()),
  sampling: fc.oneof(fc.record({ debug: fc.double() }), fc.jsonValue()),
  includeContent: fc.jsonValue(),
  includeContentAck: fc.jsonValue(),
  redact: fc.oneof(fc.array(text), fc.jsonValue()),
  scrubRules: fc.oneof(fc.array(fc.record({ id: text, pattern: fc.oneof(fc.string({ maxLength: 300 }), fc.constantFrom('(a|aa)*b', '(a+)+$', '\\', '[', '(?=x)', '.{1000}'.repeat(36), '(x\\Q)\\E+)+', '\\p{L}{200}', '.{256}')), flags: fc.string({ maxLength: 5 }) }), { maxLength: 3 }), fc.jsonValue()),
  reason: fc.oneof(text, fc.jsonValue()),
};
/**
 * Drain bodies: a valid create body with one field replaced (gets past the first refusal to that
 * field's rule, and sometimes succeeds), or any subset of fields with any values.
 */
const drainish = (endpoint: string) =>
  fc.oneof(
    ...Object.entries(drainFieldValues).map(([k, v]) => fc.tuple(v, fc.nat()).map(([value, n]) => JSON.stringify({ name: `fuzzed-${n}`, type: 'http', endpoint, [k]: value }))),
    fc.record(drainFieldValues, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
  );

/** Record-shaped arrays for the ingest route: valid records with one field replaced by anything. */
const recordish = fc
  .array(fc.tuple(
    fc.constantFrom('id', 'orgId', 'agentId', 'agentName', 'agentVersion', 'executionId', 'event', 'severity', 'timestamp', 'attributes', 'message', 'traceId', 'environment', 'source'),
    fc.oneof(fc.jsonValue(), text, fc.dictionary(text, text, { maxKeys: 3 }),
      fc.constantFrom('2026-02-30T00:00:00Z', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-01-01T24:00:00Z', 'agt_globex')),
  ), { maxLength: 5 })
  .map((edits) => JSON.stringify(edits.map(([k, v]) => ({ ...record(), [k]: v }))));

const body = (endpoint: string) => fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 3, arbitrary: drainish(endpoint) },
  recordish,
  fc.record({ reason: fc.oneof(text, fc.jsonValue()) }).map((o) => JSON.stringify(o)),
  deep,
  deepInside,
  fc.constantFrom('', '{', '{"a":', 'not json', '\u0000', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', 'null', '[]', '"x"', '1e999',
    '{"name":"' + 'n'.repeat(900_000) + '"}', 'x'.repeat(1_100_000), '\n\n{"id":1}\n{bad\n'),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

const contentType = fc.constantFrom(
  'application/json', 'application/json', 'application/json; charset=utf-8', 'application/x-ndjson', 'text/plain', 'application/xml',
  'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/octet-stream', 'garbage', undefined,
);

const authorization = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('lk_acme_manage', 'lk_acme_wild', 'lk_acme_ingest', 'lk_acme_legacy', 'sess_ann').map((t) => `Bearer ${t}`) },
  fc.constantFrom(
    undefined, '', 'Bearer', 'Bearer ', 'Bearer lk_acme_revoked', 'Bearer sess_ann_old', 'Bearer lk_globex_manage', 'Basic dXNlcjpwdw==',
    'bearer lk_acme_manage', 'Bearer  lk_acme_manage', 'Bearer lk_acme_manage extra', `Bearer ${'k'.repeat(8000)}`, 'Bearer \u00e9',
  ),
  fc.string({ maxLength: 40 }).map((s) => `Bearer ${s.replace(/[^\x20-\x7e]/g, '')}`),
);

// ---- checks -------------------------------------------------------------------------------

const LEAKS: [string, RegExp][] = [
  ['a stack frame', /\bat [^\n]*:\d+:\d+/],
  ['an internal path', /\/work\/|node_modules|\/src\/|\.[jt]s:\d+/],
  ['an Error: text', /\b\w*Error: /],
];

function checkAnswer(what: string, method: string, res: LightMyRequestResponse): void {
  expect(res.statusCode, `${what} -> ${res.statusCode} ${res.body.slice(0, 300)}`).toBeLessThan(500);
  const headers = JSON.stringify(res.headers);
  for (const [name, re] of LEAKS) {
    expect(re.test(res.body), `${what}: body holds ${name}: ${res.body.slice(0, 300)}`).toBe(false);
    expect(re.test(headers), `${what}: headers hold ${name}`).toBe(false);
  }
  if (res.statusCode >= 400) {
    if (method === 'HEAD') return expect(res.body, `${what}: HEAD body`).toBe('');
    expect(String(res.headers['content-type']), `${what}: error content type`).toMatch(/^application\/json/);
    const b = JSON.parse(res.body) as Record<string, unknown>;
    // Spec 03 part 7: the template routes answer their codes in the envelope {code, message, ...fields}.
    const templateRoute = / \/((marketplace\/)?templates|agents\/[^/ ]+\/templates)(\/|\?| |$)/.test(what);
    const envelope = templateRoute && !('statusCode' in b) && typeof b.code === 'string' && typeof b.message === 'string';
    if (envelope) return;
    expect(b.statusCode, `${what}: statusCode in ${res.body}`).toBe(res.statusCode);
    // Spec 03 part 8: the catalog's 429 is plain {statusCode, message}.
    if (templateRoute && res.statusCode === 429) return expect(Object.keys(b).sort(), `${what}: plain 429 ${res.body}`).toEqual(['message', 'statusCode']);
    // Spec 03 part 7: the workflow routes answer {statusCode, message, code, ...detail}, without `error`.
    const workflowShape = what.includes(' /workflows/') && !('error' in b) && (typeof b.code === 'string' || res.statusCode === 401);
    if (!workflowShape) expect(typeof b.error, `${what}: error in ${res.body}`).toBe('string');
    const m = b.message;
    expect(typeof m === 'string' || (Array.isArray(m) && m.every((x) => typeof x === 'string')), `${what}: message in ${res.body}`).toBe(true);
    if ('code' in b) expect(typeof b.code, `${what}: code in ${res.body}`).toBe('string');
  }
}

describe('REST fuzzing: every route, hostile paths, queries, bodies and credentials', () => {
  let app: FastifyInstance;
  let store: Store;
  let receiver: HttpsReceiver;
  let routes: Route[];
  let doc: OpenApiDoc;
  const ownTextRoutes = new Set<string>();
  // Real ids, the first one of the credentials' own organization (deep runs use it most: another org's ids answer 403 early).
  const real: Record<string, string[]> = {
    orgId: ['org_acme', 'org_globex'], agentId: ['agt_support', 'agt_sales', 'agt_globex'], drainId: [],
    // The telephony routes' parameters (unknown records: their lookups and rules still run).
    trunkId: ['trk_fuzz'], ip: ['10.0.0.0%2F8'], username: ['fuzz-user'], msisdn: ['15550100000', '%2B15550100001'], deliveryId: ['dlv_missing'],
    // The persona routes' parameters: a version that may exist, one that does not; a built-in preset and an unknown one.
    version: ['1', '2', '99'], presetId: ['pre_customer_support', 'pre_nope'],
    // The voice routes' voice: a real one of agt_support (added below) and an unknown one.
    voiceId: ['voice_missing'],
    // The workflow routes' run: an unknown one (the lookups and rules still run).
    runId: ['wfr_missing'], stepId: ['try'], workflowId: ['wf_missing'],
    // A skill's logs: a skill id (records or none, the read runs the same).
    skillId: ['skl_fuzz'],
    // The bulk template trigger's channel configuration and template.
    channelId: ['chatapp-line-1'], templateId: ['order_update'],
    // The marketplace skill routes' skill and version: a listed one with a published version (added below) and unknown ones.
    id: ['mks_missing'], versionId: ['mksv_missing'],
    // The template deploy poll's deploy: an unknown one (a deploy needs a base agent the fuzz seed has none of).
    deployId: ['dpl_missing'],
    // A drain's replay: an unknown one (the drain's lookup and access still run).
    replayId: ['rpl_missing'],
  };
  // The template routes' `templateId` (the channel trigger route's is a chat-app template's): a template with a version (added below) and an unknown one.
  const templateIds = ['tpl_MISSING'];
  const isTemplateRoute = (template: string) => /^\/((marketplace\/)?templates|agents\/[^/]+\/templates)(\/|$)/.test(template);
  const realOf = (template: string, p: string): string[] => (p === 'templateId' && isTemplateRoute(template) ? templateIds : real[p]!);
  /** An address of its own for each request: the catalog's budgets are per client address. */
  let addresses = 0;
  const nextAddress = () => {
    addresses++;
    return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    const config = loadConfig({
      DATA_DIR: 'memory://', DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: receiver.caPath, DELIVERY_TIMEOUT_MS: '1000',
      VENDOR_A_INTAKE_URL: `https://localhost:${receiver.port}/vendor-a/{site}`, VENDOR_B_HOSTS: 'localhost',
      DRAIN_RATE_LIMIT_READ_PER_MIN: '1000000', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '1000000', LOGS_READ_RATE_LIMIT_PER_MIN: '1000000',
      RCS_BULK_CHECKS_PER_MIN: '1000000',
      // The field-by-field pass sends each workflow route more requests than its bucket takes a minute.
      WORKFLOW_RATE_LIMIT_READ_PER_MIN: '1000000', WORKFLOW_RATE_LIMIT_START_PER_MIN: '1000000', WORKFLOW_RATE_LIMIT_BATCH_PER_MIN: '1000000', WORKFLOW_RATE_LIMIT_MUTATE_PER_MIN: '1000000',
    });
    // With the families' tables and seed arrays, as the started service opens its store.
    store = await openStore({ dataDir: 'memory://', migrations: familyMigrations });
    await applySeed(store.sql, await readSeedFile(SEED_FIXTURE, familySeeds));
    app = await buildApi({
      config, store, logger: silentLogger(), metrics: createMetrics('api'), sink: { write: (r) => store.queue.enqueue(r) },
      // Routes whose own parser answers unstorable text (record by record): their bodies are not refused whole.
      onRoute: (r) => {
        if (r.config?.ownTextRule !== undefined) for (const m of [r.method].flat()) ownTextRoutes.add(`${m} ${r.url.replace(/:(\w+)/g, '{$1}')}`);
      },
    });
    await app.ready();
    doc = (await app.inject({ method: 'GET', url: '/docs/openapi.json' })).json() as OpenApiDoc;
    routes = routesOf(doc);
    // A real drain, so fuzzed requests also get past the lookups into each route's own rules.
    const created = await app.inject({
      method: 'POST', url: '/admin/orgs/org_acme/log-drains', headers: { authorization: 'Bearer lk_acme_manage' },
      payload: { name: 'fuzz-target', type: 'http', endpoint: `${receiver.url}/fuzz` },
    });
    expect(created.statusCode).toBe(201);
    real.drainId!.push(created.json().id, 'drn_00000000000000000000000000');
    // An owned number, so the number routes' deep runs get past their lookup too.
    const bought = await app.inject({
      method: 'POST', url: '/developer/orgs/org_acme/phone-numbers', headers: { authorization: 'Bearer sess_ann' }, payload: { msisdn: '15550100020' },
    });
    expect(bought.statusCode, bought.body).toBe(201);
    real.msisdn!.unshift('15550100020');
    // A voice with a version, so the voice routes' deep runs get past their lookup.
    const voice = await app.inject({ method: 'POST', url: '/developer/voice-agents/agt_support', headers: { authorization: 'Bearer sess_ann' }, payload: { name: 'fuzz-voice' } });
    expect(voice.statusCode, voice.body).toBe(201);
    real.voiceId!.unshift(voice.json().id);
    const pushed = await app.inject({ method: 'POST', url: `/developer/voice-agents/agt_support/${voice.json().id}/version`, headers: { authorization: 'Bearer sess_ann' }, payload: { version: '1.0.0', llm: { kind: 'inference', model: 'm' } } });
    expect(pushed.statusCode, pushed.body).toBe(201);
    // An RCS agent: the `:agentId` of the RCS routes is its id (a platform agent's id is an unknown one there).
    const rcs = await app.inject({ method: 'POST', url: '/developer/orgs/org_acme/rcs-agents', headers: { authorization: 'Bearer sess_ann' }, payload: { senderId: 'fuzz-sender', displayName: 'Fuzz' } });
    expect(rcs.statusCode, rcs.body).toBe(201);
    real.agentId!.push(rcs.json().id);
    // A marketplace skill of org_acme with a published version (the seed's source skill), so the skill routes' deep runs get past their lookup.
    const skill = await app.inject({ method: 'POST', url: '/marketplace/skills/list', headers: { authorization: 'Bearer sess_ann' }, payload: { sourceSkillId: 'skl_acme_crm', displayName: 'Fuzz CRM' } });
    expect(skill.statusCode, skill.body).toBe(201);
    real.id!.unshift(skill.json().id);
    const version = await app.inject({ method: 'POST', url: `/marketplace/skills/${skill.json().id}/versions/publish`, headers: { authorization: 'Bearer sess_ann' }, payload: { version: '1.0.0' } });
    expect(version.statusCode, version.body).toBe(201);
    real.versionId!.unshift(version.json().id);
    // A public template of org_acme with a version, so the template routes' deep runs get past their lookup.
    const template = await app.inject({ method: 'POST', url: '/marketplace/templates', headers: { authorization: 'Bearer sess_ann' }, payload: { sourceAgentId: 'agt_support', name: 'fuzz', displayName: 'Fuzz', visibility: 'public' } });
    expect(template.statusCode, template.body).toBe(201);
    templateIds.unshift(template.json().id);
    const published = await app.inject({ method: 'POST', url: `/marketplace/templates/${template.json().id}/versions`, headers: { authorization: 'Bearer sess_ann' }, payload: { connections: [{ key: 'crm', type: 'crm', required: true }] } });
    expect(published.statusCode, published.body).toBe(201);
    // Installed on agt_support, so the install routes' runs also reach an install.
    const installed = await app.inject({ method: 'POST', url: `/marketplace/templates/${template.json().id}/install/agt_support`, headers: { authorization: 'Bearer sess_ann' }, payload: {} });
    expect(installed.statusCode, installed.body).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await store?.close();
    await receiver?.close();
  });

  /** The first seeded credential a plain request to the route does not refuse (401/403): the one deep runs mostly use. */
  async function workingCredential(route: Route): Promise<string> {
    const url = route.template.replace(/\{(\w+)\}/g, (_, p: string) => realOf(route.template, p)[0]!);
    for (const c of CREDENTIALS) {
      const res = await app.inject({ method: route.method as InjectOptions['method'], url, headers: { authorization: `Bearer ${c}` }, remoteAddress: nextAddress() });
      if (res.statusCode !== 401 && res.statusCode !== 403) return c;
    }
    return CREDENTIALS[0]!;
  }

  it('reads every route from the OpenAPI document and the operator list', () => {
    // The document carries the drain, log read and ingest routes; a route added there is fuzzed below.
    expect(routes.length).toBeGreaterThanOrEqual(UNDOCUMENTED.length + 16);
    expect(routes.map((r) => `${r.method} ${r.template}`)).toContain('PATCH /admin/orgs/{orgId}/log-drains/{drainId}');
  });

  // Found by the runs above (each was a 500: Postgres cannot hold NUL nor JavaScript's extreme years); kept as plain cases.
  it('refuses decodable cursors Postgres could not take, NUL in drain fields, reasons and ingested records, and records nested past the stack', async () => {
    const H = { authorization: 'Bearer lk_acme_legacy' };
    const cursorOf = (pair: unknown) => Buffer.from(JSON.stringify(pair)).toString('base64url');
    const drain = real.drainId![0]!;
    for (const pair of [['2026-01-01T00:00:00.000Z', 'a\u0000b'], ['-271821-04-20T00:00:00.000Z', 'x'], ['+275760-09-13T00:00:00.000Z', 'x'], ['2026-01-01', 'x']]) {
      for (const route of [`/admin/orgs/org_acme/log-drains/${drain}/deliveries`, '/admin/orgs/org_acme/log-drains-audit', '/admin/orgs/org_acme/logs', '/admin/orgs/org_acme/logs/download', '/developer/agents/agt_support/logs']) {
        const res = await app.inject({ method: 'GET', url: `${route}?cursor=${cursorOf(pair)}`, headers: H });
        expect(res.statusCode, `${route} ${JSON.stringify(pair)}`).toBe(400);
        expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', field: 'cursor' });
      }
    }
    // Half a surrogate pair: jsonb refuses it (a 500), text stores it altered (a secret that no longer signs).
    for (const [field, value] of [
      ['redact', ['a\u0000']], ['agents', ['agt\u0000']], ['scrubRules', [{ id: 'r\u0000', pattern: 'x' }]], ['name', 'a\u0000'],
      ['redact', ['k\ud800']], ['scrubRules', [{ id: 'r\udc00', pattern: 'x' }]], ['name', 'n\ud800'], ['secret', `${'s'.repeat(16)}\ud800`], ['agents', ['agt\ud800']],
    ] as const) {
      const res = await app.inject({ method: 'PATCH', url: `/admin/orgs/org_acme/log-drains/${drain}`, headers: H, payload: { [field]: value } });
      expect(res.statusCode, field).toBe(400);
      expect(res.json()).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field });
    }
    for (const reason of ['a\u0000b', 'a\ud800b']) {
      const pause = await app.inject({ method: 'POST', url: `/admin/orgs/org_acme/log-drains/${drain}/pause`, headers: H, payload: { reason } });
      expect(pause.statusCode).toBe(400);
      expect(pause.json()).toMatchObject({ code: 'DRAIN_VALIDATION_FAILED', field: 'reason' });
    }
    // The ingest route refuses what the worker would dead-letter, with the worker's reasons.
    const ingest = await app.inject({
      method: 'POST', url: '/internal/records', headers: { authorization: 'Bearer lk_acme_ingest' },
      payload: [record({ message: 'a\u0000b' }), record({ message: 'x'.repeat(300 * 1024) }), record(), record({ agentName: 'bot\udc00' })],
    });
    expect(ingest.statusCode).toBe(202);
    expect(ingest.json()).toMatchObject({
      accepted: 1,
      rejected: [{ index: 0, errors: ['contains a NUL character (\\u0000)'] }, { index: 1 }, { index: 3, errors: ['contains half of a UTF-16 surrogate pair'] }],
    });
    expect(ingest.json().rejected[1].errors[0]).toMatch(/^record of \d+ bytes exceeds 262144$/);
    // 20,000 levels: JSON.stringify (recursive) overflows the stack on it; JSON.parse does not.
    const deeply = '['.repeat(20_000) + ']'.repeat(20_000);
    const deepRecord = await app.inject({
      method: 'POST', url: '/internal/records', headers: { authorization: 'Bearer lk_acme_ingest', 'content-type': 'application/json' },
      payload: `[${JSON.stringify(record()).slice(0, -1)},"extra":${deeply}}]`,
    });
    expect(deepRecord.json()).toMatchObject({ accepted: 0, rejected: [{ index: 0, errors: ['extra nests deeper than 32 levels'] }] });
    const deepField = await app.inject({ method: 'PATCH', url: `/admin/orgs/org_acme/log-drains/${drain}`, headers: { ...H, 'content-type': 'application/json' }, payload: `{"redact":${deeply}}` });
    expect(deepField.statusCode).toBe(400);
  });

  // Found by probing from outside (each a 500, or accepted where it had to be refused); kept as plain cases.
  it('refuses calendar extremes, odd secrets, connection-control header names, long ids and deep unauthenticated bodies', async () => {
    const H = { authorization: 'Bearer lk_acme_legacy' };
    for (const q of ['since=9999999w', 'since=0000-01-01', 'until=0000-12-31']) {
      for (const route of ['/admin/orgs/org_acme/logs', '/admin/orgs/org_acme/logs/download', '/developer/agents/agt_support/logs']) {
        const res = await app.inject({ method: 'GET', url: `${route}?${q}`, headers: H });
        expect(res.statusCode, `${route}?${q}`).toBe(400);
      }
    }
    const drain = real.drainId![0]!;
    for (const body of [{ secret: 'whsec_!!!!!!!!!!!!!!!!!!!!' }, { secret: 'whsec_AAAAAAAAAAAAAAAA' }, { headers: [{ name: 'Expect', value: '100-continue' }] }, { name: '\u200b' }]) {
      const res = await app.inject({ method: 'PATCH', url: `/admin/orgs/org_acme/log-drains/${drain}`, headers: H, payload: body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    const ingest = await app.inject({ method: 'POST', url: '/internal/records', headers: { authorization: 'Bearer lk_acme_ingest' }, payload: [record({ agentId: 'a'.repeat(100_000) }), record({ timestamp: '2026-02-30T00:00:00Z' })] });
    expect(ingest.json()).toMatchObject({ accepted: 0 });
    const unauthenticated = await app.inject({ method: 'POST', url: '/internal/records', headers: { 'content-type': 'application/x-ndjson' }, payload: '['.repeat(1_000_000) });
    expect(unauthenticated.statusCode).toBe(401);
  });

  it('answers every fuzzed request without a 5xx or a leak, with the spec error shape', { timeout: 360_000 }, async () => {
    let requests = 0;
    const statuses = new Map<string, Map<number, number>>();
    // Each route's runs are seeded by its place in the list; the workflow routes (added after the
    // others) are seeded after them, and the routes added after those after them in turn, so every
    // other route keeps the runs it had.
    const added = new Set(['GET /developer/{agentId}/{skillId}/logs', 'POST /admin/agents/{agentId}/channels/{channelId}/chatapp-templates/{templateId}/trigger']);
    const isAdded = (r: Route) => added.has(`${r.method} ${r.template}`);
    const isWorkflow = (r: Route) => r.template.startsWith('/workflows/');
    const isTemplates = (r: Route) => isTemplateRoute(r.template);
    const seeded = [...routes.filter((r) => !isWorkflow(r) && !isAdded(r) && !isTemplates(r)), ...routes.filter(isWorkflow), ...routes.filter(isAdded), ...routes.filter(isTemplates)];
    expect(routes.filter(isAdded)).toHaveLength(added.size);
    for (const route of routes) {
      const i = seeded.indexOf(route);
      for (const depth of ['broad', 'deep'] as const) {
        // broad: anything on the wire. deep: the route's own method, real ids and a credential
        // holding the scope, so the fuzzed query and body reach the route's rules and its store calls.
        const deep = depth === 'deep';
        const params = fc.record(Object.fromEntries(route.params.map((p) => {
          const ids = realOf(route.template, p);
          return [p, deep ? fc.oneof({ weight: 8, arbitrary: fc.constant(ids[0]!) }, fc.constantFrom(...ids), segment(['x'])) : segment(ids ?? ['x'])];
        })));
        const request = fc.record({
          params,
          query: query(route.query),
          body: fc.option(body(`${receiver.url}/fuzz`), { freq: deep && route.method === 'GET' ? 4 : 2 }),
          contentType: deep ? fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, contentType) : contentType,
          authorization: deep ? fc.oneof({ weight: 4, arbitrary: fc.constant(`Bearer ${await workingCredential(route)}`) }, fc.constantFrom(...CREDENTIALS.map((c) => `Bearer ${c}`))) : authorization,
          method: deep ? fc.constant(route.method) : fc.constantFrom(route.method, route.method, 'PUT', 'OPTIONS', 'HEAD'),
        });
        await fc.assert(
          fc.asyncProperty(request, async (r) => {
            const path = route.template.replace(/\{(\w+)\}/g, (_, p: string) => (r.params as Record<string, string>)[p]!);
            const url = r.query ? `${path}?${r.query}` : path;
            const headers: Record<string, string> = {};
            if (r.authorization !== undefined) headers.authorization = r.authorization;
            if (r.contentType !== undefined && r.body !== null) headers['content-type'] = r.contentType;
            const opts: InjectOptions = { method: r.method as InjectOptions['method'], url, headers, remoteAddress: nextAddress() };
            if (r.body !== null && r.method !== 'HEAD') opts.payload = r.body;
            requests++;
            const res = await app.inject(opts);
            const key = `${depth} ${route.method} ${route.template}`;
            const seen = statuses.get(key) ?? new Map<number, number>();
            statuses.set(key, seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1));
            checkAnswer(`${r.method} ${url.slice(0, 200)} [${r.contentType}] ${String(r.body).slice(0, 120)}`, r.method, res);
          }),
          { seed: SEED + 2 * i + Number(deep), numRuns: deep ? RUNS : RUNS / 2, endOnFailure: true },
        );
      }
    }
    console.info(`fuzz: ${routes.length} routes, ${requests} requests, seed ${SEED}`);
    // The deep runs must reach each route's own rules, not stop at authentication or lookups.
    const stoppedEarly = [...statuses].filter(([k, seen]) => k.startsWith('deep') && [...seen.keys()].every((s) => s === 401 || s === 403 || s === 404));
    expect(stoppedEarly.map(([k]) => k)).toEqual([]);
  });

  /**
   * Each field of each route, one at a time: every string of a body made from the route's body
   * schema in the OpenAPI document, every query and path parameter, given NUL and
   * half a surrogate pair; every date-time given the calendar's extremes; every free-form field
   * nested past the stack and given odd keys. A route added to the document is covered as it is.
   */
  it('refuses NUL, lone surrogates and calendar extremes in every field and parameter of every route, and survives deep nesting', { timeout: 240_000 }, async () => {
    const UNSTORABLE = ['a\u0000b', 'b\ud800', '\udc00c'];
    // Instants no timestamp column holds, or no calendar has; the bounds are 1970-01-01 and 9999-12-31.
    const EXTREMES = ['0000-01-01T00:00:00Z', '0000-12-31', '10000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z', '-000001-01-01T00:00:00Z',
      '1969-12-31T23:59:59Z', '9999-12-31T23:59:60Z', '253402300800000', '999999999999999'];
    const DEEP = 20_000;
    const FREE = ['{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP), '['.repeat(DEEP) + ']'.repeat(DEEP), '{"k\\u0000":1}', '{"k":"\\ud800"}', '{"__proto__":{"x":"\\u0000"}}'];
    const PLACEHOLDER = '__fuzz_raw_value__';
    /** Query parameters that name an instant: a date-time format, or described as one. */
    const isInstantParam = (p: Parameter): boolean =>
      p.schema?.format === 'date-time' || /date-time|ISO 8601|milliseconds/i.test(`${String(p.schema?.['x-rule'] ?? '')} ${p.description ?? ''}`) || /^(since|until|from|to)$|Since$|At$/.test(p.name);

    let requests = 0;
    const kernelAnswered = new Map<string, number>();
    /** Routes with a body field whose schema takes any text: the text rule itself must answer there. */
    const openBodies = new Set<string>();
    const problems: string[] = [];
    for (const route of routes.filter((r) => doc.paths[r.template]?.[r.method.toLowerCase()] !== undefined)) {
      const op = doc.paths[route.template]![route.method.toLowerCase()]!;
      const key = `${route.method} ${route.template}`;
      const credential = await workingCredential(route);
      const keyRequired = (op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'idempotency-key' && (p as { required?: boolean }).required === true);
      const paramsOf = (over: Record<string, string> = {}) => route.template.replace(/\{(\w+)\}/g, (_, p: string) => over[p] ?? realOf(route.template, p)[0]!);
      const send = async (what: string, opts: { path?: string; query?: string; body?: string }, mustRefuse: boolean, field?: string) => {
        const url = `${opts.path ?? paramsOf()}${opts.query ? `?${opts.query}` : ''}`;
        // A route that requires an Idempotency-Key (the template deploy) gets one, so its body reaches the text rule.
        const keyed = keyRequired ? { 'idempotency-key': `fuzz-fields-${String(requests).padStart(8, '0')}` } : {};
        const inject: InjectOptions = { method: route.method as InjectOptions['method'], url, headers: { authorization: `Bearer ${credential}`, ...keyed }, remoteAddress: nextAddress() };
        if (opts.body !== undefined) Object.assign(inject, { payload: opts.body, headers: { ...inject.headers, 'content-type': 'application/json' } });
        requests++;
        const res = await app.inject(inject);
        try {
          checkAnswer(`${key} ${what}`, route.method, res);
        } catch (e) {
          problems.push((e as Error).message.split('\n')[0]!);
        }
        if (mustRefuse && !(res.statusCode >= 400 && res.statusCode < 500)) problems.push(`${key} ${what}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        if (res.body.includes('NUL characters or unpaired surrogates')) {
          kernelAnswered.set(key, (kernelAnswered.get(key) ?? 0) + 1);
          // The answer names the field (a family may name the body's top-level field that holds it).
          if (field !== undefined && !res.body.includes(field)) problems.push(`${key} ${what}: the answer does not name ${field}: ${res.body.slice(0, 200)}`);
        }
        return res;
      };

      // Path parameters: NUL percent-encoded (a URL cannot carry a lone surrogate; its UTF-8 form fails to decode).
      for (const p of route.params) {
        for (const v of ['%00', `${encodeURIComponent(realOf(route.template, p)[0]!)}%00`, 'x%ED%A0%80']) await send(`path ${p}=${v}`, { path: paramsOf({ [p]: v }) }, v.includes('%00'));
      }
      // Query parameters (an undeclared one where the route takes none): NUL and surrogates, and instants' extremes.
      const queryParams = (op.parameters ?? []).filter((p) => p.in === 'query');
      for (const p of queryParams.length > 0 ? queryParams : [{ in: 'query', name: 'fuzz' }]) {
        // A query string cannot carry a lone surrogate either: sent as its UTF-8 form, which fails to decode.
        for (const v of UNSTORABLE) await send(`query ${p.name}=${JSON.stringify(v)}`, { query: `${p.name}=${uriEncode(v).replace(/%EF%BF%BD/g, '%ED%A0%80')}` }, v.includes('\u0000'), p.name);
        if (isInstantParam(p)) for (const v of EXTREMES) await send(`query ${p.name}=${v}`, { query: `${p.name}=${encodeURIComponent(v)}` }, true);
      }
      // Body fields, from the body schema: each branch of a choice at the root on its own.
      const schema = op.requestBody?.content['application/json']?.schema as Record<string, unknown> | undefined;
      if (schema === undefined) continue;
      const ownText = ownTextRoutes.has(key);
      for (const branch of (schema.anyOf ?? schema.oneOf ?? [schema]) as unknown[]) {
        const sample = sampleOf(branch);
        const slots: Slot[] = slotsOf(branch);
        if (!ownText && slots.some((s) => s.open)) openBodies.add(key);
        for (const slot of slots) {
          const at = slot.path.join('.') || 'body';
          const top = String(slot.path[0] ?? 'body');
          const values = slot.kind === 'string' ? UNSTORABLE.map((v) => JSON.stringify(v)) : slot.kind === 'instant' ? EXTREMES.map((v) => JSON.stringify(v)) : FREE;
          for (const v of values) {
            const body = JSON.stringify(withValueAt(branch, sample, slot.path, PLACEHOLDER)).replace(`"${PLACEHOLDER}"`, () => v);
            await send(`body ${at}=${v.slice(0, 40)}`, { body }, slot.kind !== 'free' && !ownText, slot.kind === 'string' ? top : undefined);
          }
        }
      }
    }
    console.info(`fuzz fields: ${requests} requests; the kernel's text rule answered on ${kernelAnswered.size} routes (${openBodies.size} bodies take any text)`);
    expect(problems).toEqual([]);
    // Every body with a field that takes any text had a sample its schema accepted, so the text rule itself answered.
    expect(openBodies.size).toBeGreaterThan(30);
    expect([...openBodies].filter((k) => !kernelAnswered.has(k))).toEqual([]);
  });
});
