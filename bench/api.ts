/**
 * REST API benchmark on loopback: `npm run bench:api`.
 *
 * This process starts the logdrain API as operators run it (`run('serve', loadConfig(env))`, the
 * seed file of the tests, a silent logger) and, beside it, a bare fastify app answering
 * `GET /bare` with a small JSON: the baseline, answered by the same process in the same run.
 * Each scenario is loaded by autocannon in a child process (bench/api-load.ts) for a fixed time
 * with a fixed number of connections; its requests a second are reported as a ratio to the bare
 * route's of the same mode. The bare route is measured first and last in each mode and the mean
 * of the two is the ratio's denominator (both are reported, to show drift on a shared machine).
 *
 * Modes (`BENCH_API_MODES`, default `embedded,postgres`): `embedded` is the embedded store
 * (PGlite, `DATA_DIR=memory://`); `postgres` is a fresh database on BENCH_POSTGRES_URL's server,
 * dropped at the end. On Postgres, the authenticated GET is also offered at a fixed rate. The skill
 * search scenario reads 10,000 marketplace skills written into the store first; the plan of its
 * query (EXPLAIN ANALYZE) is printed and kept with the results.
 *
 * Environment: BENCH_API_SECONDS (10), BENCH_API_CONNECTIONS (10), BENCH_API_WARMUP_SECONDS (1),
 * BENCH_API_RATE (1000), BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test),
 * BENCH_API_FAMILY_RATE (500: the route families' scenarios at a fixed rate on Postgres),
 * BENCH_API_SCENARIOS (every scenario): comma-separated parts of scenario names; only the scenarios
 * whose name holds one of them are measured (the bare route always is), and the fixed-rate runs
 * only with the authenticated GET among them. A run so narrowed writes no results file.
 */
import { gzipSync } from 'node:zlib';
import { spawn, execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { loadConfig } from '../src/config/config.js';
import { run, type Running } from '../src/commands/run.js';
import { silentLogger } from '../src/telemetry/logger.js';
import type { LoadResult, LoadSpec } from './api-load.js';
import { createTestDatabase } from '../test/helpers/postgres.js';
import { searchStatement } from '../src/modules/skills/repository.js';

type Mode = 'embedded' | 'postgres';

const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_API_WARMUP_SECONDS ?? 1);
const RATE = Number(process.env.BENCH_API_RATE ?? 1000);
const MODES = (process.env.BENCH_API_MODES ?? 'embedded,postgres').split(',').map((m) => m.trim()).filter(Boolean) as Mode[];
const ONLY = (process.env.BENCH_API_SCENARIOS ?? '').split(',').map((m) => m.trim()).filter(Boolean);
const selected = (name: string): boolean => ONLY.length === 0 || name.startsWith('bare') || ONLY.some((part) => name.includes(part));
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SEED_FILE = fileURLToPath(new URL('../test/fixtures/seed-acme.json', import.meta.url));
const LOAD_SCRIPT = fileURLToPath(new URL('./api-load.ts', import.meta.url));
const KEY = 'lk_acme_manage';
/** Acme's admin acting through a legacy key: every telephony scope (CONTRACT part 6). */
const TELEPHONY_KEY = 'lk_acme_legacy';
const TRUNK_COUNT = 5;
/** The persona scenarios' credential: the organization admin's legacy key (drain keys hold no agents scope). */
const PERSONA_KEY = 'lk_acme_legacy';
const PERSONA_LISTED = '/developer/agents/agt_support/persona';
const PERSONA_CREATED = '/developer/agents/agt_sales/persona';
/** Versions the list scenario answers. */
const PERSONA_VERSIONS = 20;
const VOICES = '/developer/voice-agents/agt_support';
/**
 * The voice that takes the pushed versions is another agent's: the list reads every voice of its
 * agent, and would otherwise answer the push scenario's thousands of versions in the runs after it.
 */
const PUSHED_VOICES = '/developer/voice-agents/agt_sales';
/** Voices of the voice list scenario, and versions each (every version carries a bundle). */
const VOICE_COUNT = 5;
const VOICE_VERSIONS = 4;
/** A version body as the tooling pushes it: the pipeline, hooks and a small gzipped bundle. */
const VOICE_VERSION = {
  llm: { kind: 'inference', model: 'voice-model-1' }, stt: { kind: 'inference', model: 'stt-1' }, tts: { kind: 'inference', model: 'tts-1', voice: 'alloy' },
  greeting: 'Hello, how can I help?', interruption: { enabled: true, minDelay: 0.3, maxDelay: 1.5 }, volume: 80, pronunciations: { SQL: 'sequel' },
  hasTools: true, bundle: gzipSync(Buffer.from('export const tools = [{ name: "lookup", run: async () => ({ ok: true }) }];\n'.repeat(20))).toString('base64'),
};
const ORG = 'org_acme';
const TRUNKS = `/developer/orgs/${ORG}/sip-trunks`;
const DRAINS = `/admin/orgs/${ORG}/log-drains`;
/** The seed's admin session: a person holding every scope of the organization, channels:send included. */
const SESSION = 'sess_ann';
const CHANNELS_SEND = '/developer/agents/agt_support/channels/send';
const CHANNELS_DELIVERIES = '/developer/agents/agt_support/channels/deliveries';
/** The standard plan's drain limit (src/modules/drains/service.ts MAX_DRAINS). */
const DRAIN_LIMIT = 5;
/** Marketplace skills the search scenario reads, and the term it searches (in 1 description in 100). */
const SKILL_COUNT = 10_000;
const SKILL_SEARCH = '/marketplace/skills?search=needle';
/** Templates of the organization in the catalog (each public with one version), and the page the list scenario reads. */
const TEMPLATE_COUNT = 50;
const TEMPLATE_LIST = '/marketplace/templates?limit=20';
const TARGET_GET_RATIO = 0.4;
const TARGET_FIXED_RATE_P99_MS = 10;
/** The route families' scenarios (telephony, channels, persona): floors of their ratios to the bare route, and their latency at a fixed rate. */
const TARGET_FAMILY_RATIO: Record<'read' | 'write', Partial<Record<Mode, number>>> = { read: { embedded: 0.05, postgres: 0.15 }, write: { postgres: 0.05 } };
const FAMILY_RATE = Number(process.env.BENCH_API_FAMILY_RATE ?? 500);
const TARGET_FAMILY_P99_MS = 20;

for (const m of MODES) if (m !== 'embedded' && m !== 'postgres') throw new Error(`BENCH_API_MODES: unknown mode ${m}`);

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const loadavgStart = loadavg();

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  auth: boolean;
  /** On the bare app rather than the API. */
  bare?: boolean;
  /** The only status every response must have. */
  status: number;
  /** The error code the answer must carry (checked once before the load). */
  code?: string;
  /** The bearer token, when not the drain key (the channel routes need `channels:send`: the admin's session holds it). */
  token?: string;
  /** Every request's body differs: `{{seq}}` in it becomes a number unique to the request (bench/api-load.ts). */
  uniqueBody?: boolean;
  /** Every request comes from its own forwarded address (per-address budgets; bench/api-load.ts). */
  uniqueAddress?: boolean;
  /** A route family's read or write: held to that kind's ratio target, and also run at FAMILY_RATE on Postgres. */
  family?: 'read' | 'write';
}

interface Measured extends LoadResult {
  scenario: string;
  mode: Mode;
  expectedStatus: number;
  ratioToBare?: number;
  overallRate?: number;
  family?: 'read' | 'write';
}

function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', LOAD_SCRIPT, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited ${code}: ${err.slice(-2000)}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!) as LoadResult);
      } catch (e) {
        reject(new Error(`load generator printed no result: ${(e as Error).message}; stdout ${out.slice(-500)}; stderr ${err.slice(-1000)}`));
      }
    });
  });
}

async function request(base: string, method: string, path: string, body?: unknown, token = KEY): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

async function startBare(): Promise<{ base: string; close(): Promise<void> }> {
  const bare = Fastify({ logger: false });
  bare.get('/bare', async () => ({ ok: true, service: 'bare' }));
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const { port } = bare.server.address() as { port: number };
  return { base: `http://127.0.0.1:${port}`, close: () => bare.close() };
}

const createDatabase = () => createTestDatabase(ADMIN_URL, 'logdrain_bench_api');

function check(m: Measured): void {
  const unexpected = Object.entries(m.statusCodes).filter(([code]) => Number(code) !== m.expectedStatus);
  if (unexpected.length > 0 || m.errors > 0 || m.timeouts > 0 || m.responses === 0) {
    throw new Error(
      `${m.mode} / ${m.scenario}: expected every response to be ${m.expectedStatus}; got status counts ${JSON.stringify(m.statusCodes)}, ` +
      `${m.errors} errors, ${m.timeouts} timeouts, ${m.responses} responses`,
    );
  }
}

/** The plan of the search scenario's page query, as the store runs it (EXPLAIN ANALYZE, text). */
async function skillSearchPlan(app: Running): Promise<string[]> {
  const s = searchStatement([ORG], { search: 'needle' }, { limit: 10, offset: 0 });
  const rows = await app.store.sql.query<{ 'QUERY PLAN': string }>(`explain analyze ${s.page}`, [...s.params, 10, 0]);
  return rows.map((r) => r['QUERY PLAN']);
}

interface ModeResult {
  scenarios: Measured[];
  bareRequestsPerSecond: number;
  fixedRate?: Measured;
  /** Postgres: each family scenario at FAMILY_RATE requests a second. */
  familyFixedRate?: Measured[];
  skillSearchPlan: string[];
}

async function measureMode(mode: Mode): Promise<ModeResult> {
  const db = mode === 'postgres' ? await createDatabase() : undefined;
  const bare = await startBare();
  let app: Running | undefined;
  try {
    const env: Record<string, string> = {
      PORT: '0', HOST: '127.0.0.1', SEED_FILE, LOG_LEVEL: 'silent',
      DRAIN_RATE_LIMIT_READ_PER_MIN: '1000000000', DRAIN_RATE_LIMIT_MUTATE_PER_MIN: '1000000000', LOGS_READ_RATE_LIMIT_PER_MIN: '1000000000',
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost',
      // The template catalog's budgets are per client address: each request forwards its own.
      TRUST_PROXY: 'true',
      ...(db ? { DATABASE_URL: db.url } : { DATA_DIR: 'memory://' }),
    };
    app = await run('serve', loadConfig(env), silentLogger());
    const base = `http://127.0.0.1:${app.port}`;

    // One drain to read, then more up to the organization's limit: the list answers five drains
    // and a valid create reaches the limit check (a create that succeeded could not repeat).
    const created = await request(base, 'POST', DRAINS, { name: 'bench-get', type: 'http', endpoint: 'https://localhost:9/x' });
    if (created.status !== 201) throw new Error(`${mode}: creating the drain answered ${created.status} ${JSON.stringify(created.json)}`);
    const drainId = (created.json as { id: string }).id;
    for (let i = 1; i < DRAIN_LIMIT; i++) {
      const r = await request(base, 'POST', DRAINS, { name: `bench-fill-${i}`, type: 'http', endpoint: `https://localhost:9/fill-${i}` });
      if (r.status !== 201) throw new Error(`${mode}: creating drain ${i + 1} answered ${r.status} ${JSON.stringify(r.json)}`);
    }

    // SIP trunks for the trunk list (a trunk read form joins its ACL entries and digest users).
    for (let i = 0; i < TRUNK_COUNT; i++) {
      const r = await request(base, 'POST', TRUNKS, { acl: [`192.0.2.${i}/32`, '198.51.100.0/24'], enableDigestAuth: true }, TELEPHONY_KEY);
      if (r.status !== 201) throw new Error(`${mode}: creating trunk ${i + 1} answered ${r.status} ${JSON.stringify(r.json)}`);
    }
    // An agent with persona versions to list; another one takes the created versions.
    for (let i = 0; i < PERSONA_VERSIONS; i++) {
      const r = await request(base, 'POST', `${PERSONA_LISTED}/version`, { persona: `Bench persona ${i}: answer briefly and kindly.` }, PERSONA_KEY);
      if (r.status !== 201) throw new Error(`${mode}: creating persona version ${i + 1} answered ${r.status} ${JSON.stringify(r.json)}`);
    }

    // Marketplace skills of the organization, written straight into the store (10,000 listings
    // through the API would take longer than the measurements): every 100th mentions the term.
    await app.store.sql.query(`insert into skills_sources (id, org_id, name) select 'skl_bench_' || i, '${ORG}', 'bench-skill-' || i from generate_series(1, ${SKILL_COUNT}) i`);
    await app.store.sql.query(
      `insert into skills (id, name, display_name, description, creator_id, creator_org_id, source_skill_id, visibility, created_at, updated_at)
       select 'mks_bench_' || i, 'bench-skill-' || i, 'Bench skill ' || i,
              case when i % 100 = 0 then 'Finds the needle in a haystack of records ' || i else 'Answers questions about topic ' || (i % 97) || ' for customers' end,
              'usr_ann', '${ORG}', 'skl_bench_' || i, case when i % 10 = 0 then 'private' else 'public' end, now() - i * interval '1 second', now()
       from generate_series(1, ${SKILL_COUNT}) i`,
    );
    await app.store.sql.query('analyze skills');
    const searchPlan = await skillSearchPlan(app);

    const valid = { name: 'bench-over-limit', type: 'http', endpoint: 'https://localhost:9/over', format: 'ndjson', minSeverity: 'info', agents: ['agt_support'], environments: ['production'], headers: [{ name: 'X-Bench', value: 'yes' }] };
    const scenarios: Scenario[] = [
      { name: 'bare GET /bare (first)', method: 'GET', path: '/bare', auth: false, bare: true, status: 200 },
      { name: 'authenticated GET of one drain', method: 'GET', path: `${DRAINS}/${drainId}`, auth: true, status: 200 },
      { name: `authenticated list (${DRAIN_LIMIT} drains)`, method: 'GET', path: DRAINS, auth: true, status: 200 },
      { name: 'create, valid body at the drain limit', method: 'POST', path: DRAINS, body: valid, auth: true, status: 422, code: 'DRAIN_LIMIT_REACHED' },
      { name: 'create, one invalid field (agent of another org)', method: 'POST', path: DRAINS, body: { ...valid, agents: ['agt_support', 'agt_globex'] }, auth: true, status: 422, code: 'DRAIN_AGENT_NOT_IN_ORG' },
      { name: 'GET of an unknown drain id (404)', method: 'GET', path: `${DRAINS}/drn_doesnotexist`, auth: true, status: 404, code: 'DRAIN_NOT_FOUND' },
      { name: `SIP trunk list (${TRUNK_COUNT} trunks)`, family: 'read', method: 'GET', path: TRUNKS, auth: true, token: TELEPHONY_KEY, status: 200 },
      { name: 'phone number search (carrier-b, 10 numbers)', family: 'read', method: 'GET', path: '/developer/phone-numbers/available?country=US&transport=carrier-b&features=voice', auth: true, status: 200 },
      { name: 'channel send (sms, cold phone number, sandbox vendor)', family: 'write', method: 'POST', path: CHANNELS_SEND, body: { channel: 'sms', to: { phoneNumber: '+15550001234' }, text: 'bench' }, auth: true, token: SESSION, status: 200 },
      { name: 'channel deliveries list (50 newest)', family: 'read', method: 'GET', path: CHANNELS_DELIVERIES, auth: true, token: SESSION, status: 200 },
      { name: `persona versions list (${PERSONA_VERSIONS} versions)`, family: 'read', method: 'GET', path: `${PERSONA_LISTED}/versions`, auth: true, token: PERSONA_KEY, status: 200 },
      { name: 'persona version create', family: 'write', method: 'POST', path: `${PERSONA_CREATED}/version`, body: { persona: { base: 'You are the sales assistant.', voice: 'Warm.', text: 'Be brief.' } }, auth: true, token: PERSONA_KEY, status: 201 },
      { name: `skill search, free text (${SKILL_COUNT} skills, 1 in 100 matching, first page of 10)`, family: 'read', method: 'GET', path: SKILL_SEARCH, auth: true, token: SESSION, status: 200 },
      { name: 'bare GET /bare (last)', method: 'GET', path: '/bare', auth: false, bare: true, status: 200 },
    ];

    // Voices with versions for the voice list; one more voice, of another agent, takes the pushed versions.
    let pushVoiceId = '';
    for (let i = 0; i <= VOICE_COUNT; i++) {
      const v = await request(base, 'POST', i === VOICE_COUNT ? PUSHED_VOICES : VOICES, { name: `bench-voice-${i}` }, TELEPHONY_KEY);
      if (v.status !== 201) throw new Error(`${mode}: creating voice ${i + 1} answered ${v.status} ${JSON.stringify(v.json)}`);
      if (i === VOICE_COUNT) {
        pushVoiceId = (v.json as { id: string }).id;
        break;
      }
      const voiceId = (v.json as { id: string }).id;
      for (let n = 0; n < VOICE_VERSIONS; n++) {
        const r = await request(base, 'POST', `${VOICES}/${voiceId}/version`, { version: `1.0.${n}`, ...VOICE_VERSION }, TELEPHONY_KEY);
        if (r.status !== 201) throw new Error(`${mode}: pushing version ${n + 1} of voice ${i + 1} answered ${r.status} ${JSON.stringify(r.json)}`);
      }
    }
    // Templates in the catalog: public, each with one version (the seal computed at publish).
    let manifestTemplateId = '';
    for (let i = 0; i < TEMPLATE_COUNT; i++) {
      const t = await request(base, 'POST', '/marketplace/templates', { sourceAgentId: 'agt_support', name: `bench-template-${i}`, displayName: `Bench template ${i}`, description: 'Answers the phone and books visits', visibility: 'public' }, SESSION);
      if (t.status !== 201) throw new Error(`${mode}: creating template ${i + 1} answered ${t.status} ${JSON.stringify(t.json)}`);
      manifestTemplateId = (t.json as { id: string }).id;
      const v = await request(base, 'POST', `/marketplace/templates/${manifestTemplateId}/versions`, {
        envContract: { CRM_TOKEN: { description: 'CRM token', required: true } }, declaredTriggers: [{ key: 'daily' }, { key: 'inbound' }],
        connections: [{ key: 'crm', type: 'crm', required: true }], installPolicy: { perWorkspace: 'multiple' },
      }, SESSION);
      if (v.status !== 201) throw new Error(`${mode}: publishing template ${i + 1} answered ${v.status} ${JSON.stringify(v.json)}`);
    }
    scenarios.splice(scenarios.length - 1, 0,
      { name: `template catalog list (${TEMPLATE_COUNT} templates, first page of 20)`, family: 'read', method: 'GET', path: TEMPLATE_LIST, auth: true, token: SESSION, uniqueAddress: true, status: 200 },
      { name: 'template manifest read (latest version, with reconciliation)', family: 'read', method: 'GET', path: `/marketplace/templates/${manifestTemplateId}/manifest`, auth: true, token: SESSION, uniqueAddress: true, status: 200 },
      { name: `voice list (${VOICE_COUNT} voices, ${VOICE_VERSIONS} versions each, with bundles)`, family: 'read', method: 'GET', path: VOICES, auth: true, token: TELEPHONY_KEY, status: 200 },
      { name: 'voice version push', family: 'write', method: 'POST', path: `${PUSHED_VOICES}/${pushVoiceId}/version`, body: { version: '2.0.{{seq}}', ...VOICE_VERSION }, uniqueBody: true, auth: true, token: TELEPHONY_KEY, status: 201 },
      // The deliveries list once more, long after the sends: the sandbox plans no receipt for the
      // send scenario's number (src/vendors/messaging/sandbox.ts), so both runs read the same rows
      // with nothing else running; a gap between them would be the sends' aftermath.
      { name: 'channel deliveries list (50 newest), again after the other scenarios', family: 'read', method: 'GET', path: CHANNELS_DELIVERIES, auth: true, token: SESSION, status: 200 },
    );

    // Each scenario's answer checked once before the load: its status and error code.
    for (const s of scenarios) {
      const body = s.uniqueBody ? JSON.parse(JSON.stringify(s.body).replaceAll('{{seq}}', '0')) : s.body;
      const r = await request(s.bare ? bare.base : base, s.method, s.path, body, s.token);
      const got = (r.json as { code?: string } | undefined)?.code;
      if (r.status !== s.status || (s.code !== undefined && got !== s.code)) {
        throw new Error(`${mode} / ${s.name}: expected ${s.status}${s.code ? ` ${s.code}` : ''}, got ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
      }
    }

    const specOf = (s: Scenario, overallRate?: number): LoadSpec => ({
      url: (s.bare ? bare.base : base) + s.path,
      method: s.method,
      headers: { ...(s.auth ? { authorization: `Bearer ${s.token ?? KEY}` } : {}), ...(s.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(s.body !== undefined ? { body: JSON.stringify(s.body) } : {}),
      ...(s.uniqueBody ? { uniqueBody: true } : {}),
      ...(s.uniqueAddress ? { uniqueAddress: true } : {}),
      connections: CONNECTIONS,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      ...(overallRate !== undefined ? { overallRate } : {}),
    });

    const measured: Measured[] = [];
    for (const s of scenarios.filter((x) => selected(x.name))) {
      process.stderr.write(`${mode}: ${s.name} (${SECONDS} s, ${CONNECTIONS} connections)\n`);
      const m: Measured = { scenario: s.name, mode, expectedStatus: s.status, ...(await load(specOf(s))) };
      check(m);
      measured.push(m);
    }
    const bareRuns = measured.filter((m) => m.scenario.startsWith('bare'));
    const bareRequestsPerSecond = bareRuns.reduce((a, m) => a + m.requestsPerSecond, 0) / bareRuns.length;
    for (const m of measured) m.ratioToBare = m.requestsPerSecond / bareRequestsPerSecond;

    let fixedRate: Measured | undefined;
    if (mode === 'postgres' && selected(scenarios[1]!.name)) {
      const get = scenarios[1]!;
      process.stderr.write(`${mode}: ${get.name} at ${RATE} requests a second (${SECONDS} s, ${CONNECTIONS} connections)\n`);
      fixedRate = { scenario: `${get.name} at ${RATE}/s`, mode, expectedStatus: 200, overallRate: RATE, ...(await load(specOf(get, RATE))) };
      check(fixedRate);
    }
    const familyFixedRate: Measured[] = [];
    if (mode === 'postgres') {
      for (const s of scenarios.filter((x) => x.family !== undefined && selected(x.name))) {
        process.stderr.write(`${mode}: ${s.name} at ${FAMILY_RATE} requests a second (${SECONDS} s, ${CONNECTIONS} connections)\n`);
        const m: Measured = { scenario: `${s.name} at ${FAMILY_RATE}/s`, mode, expectedStatus: s.status, overallRate: FAMILY_RATE, ...(await load(specOf(s, FAMILY_RATE))) };
        check(m);
        familyFixedRate.push(m);
      }
    }
    for (const m of measured) {
      const s = scenarios.find((x) => x.name === m.scenario)!;
      if (s.family) m.family = s.family;
    }
    return {
      scenarios: measured, bareRequestsPerSecond, ...(fixedRate ? { fixedRate } : {}),
      ...(familyFixedRate.length > 0 ? { familyFixedRate } : {}), skillSearchPlan: searchPlan,
    };
  } finally {
    await app?.stop().catch((e: unknown) => process.stderr.write(`stopping the API: ${(e as Error).message}\n`));
    await bare.close();
    await db?.drop();
  }
}

const results: Partial<Record<Mode, ModeResult>> = {};
for (const mode of MODES) results[mode] = await measureMode(mode);

const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const rows = MODES.flatMap((mode) => {
  const r = results[mode]!;
  return [...r.scenarios, ...(r.fixedRate ? [r.fixedRate] : []), ...(r.familyFixedRate ?? [])].map((m) => ({
    mode,
    scenario: m.scenario,
    'req/s': Math.round(m.requestsPerSecond),
    'p50 ms': f(m.latencyMs.p50),
    'p99 ms': f(m.latencyMs.p99),
    'non-2xx': m.non2xx,
    statuses: Object.entries(m.statusCodes).map(([c, n]) => `${c}x${n}`).join(' '),
    'ratio to bare': m.overallRate === undefined ? f(m.ratioToBare!) : '(fixed rate)',
  }));
});
console.table(rows);
for (const mode of MODES) console.log(`${mode}: plan of the skill search's page query (EXPLAIN ANALYZE)\n  ${results[mode]!.skillSearchPlan.join('\n  ')}`);

const targets = [
  ...MODES.flatMap((mode) => {
    const get = results[mode]!.scenarios.find((m) => m.scenario === 'authenticated GET of one drain');
    return get ? [{
      target: `authenticated GET at least ${TARGET_GET_RATIO} of the bare route's requests a second (${mode})`,
      measured: get.ratioToBare!, threshold: TARGET_GET_RATIO, met: get.ratioToBare! >= TARGET_GET_RATIO,
    }] : [];
  }),
  ...MODES.flatMap((mode) => results[mode]!.scenarios.flatMap((m) => {
    const threshold = m.family ? TARGET_FAMILY_RATIO[m.family][mode] : undefined;
    return threshold === undefined ? [] : [{
      target: `${m.scenario}: at least ${threshold} of the bare route's requests a second (${mode})`,
      measured: m.ratioToBare!, threshold, met: m.ratioToBare! >= threshold,
    }];
  })),
  ...(results.postgres?.familyFixedRate ?? []).map((m) => {
    const offered = m.requestsPerSecond >= FAMILY_RATE * 0.95;
    return {
      target: `${m.scenario} on Postgres: p99 at most ${TARGET_FAMILY_P99_MS} ms`,
      measured: m.latencyMs.p99, threshold: TARGET_FAMILY_P99_MS, achievedRequestsPerSecond: m.requestsPerSecond,
      met: offered && m.latencyMs.p99 <= TARGET_FAMILY_P99_MS,
    };
  }),
  ...(results.postgres?.fixedRate
    ? [(() => {
        const fr = results.postgres.fixedRate;
        // The rate must actually have been offered: a generator that fell short would flatter the latency.
        const offered = fr.requestsPerSecond >= RATE * 0.95;
        return {
          target: `authenticated GET on Postgres at ${RATE} requests a second: p99 at most ${TARGET_FIXED_RATE_P99_MS} ms`,
          measured: fr.latencyMs.p99, threshold: TARGET_FIXED_RATE_P99_MS, achievedRequestsPerSecond: fr.requestsPerSecond,
          met: offered && fr.latencyMs.p99 <= TARGET_FIXED_RATE_P99_MS,
        };
      })()]
    : []),
];
for (const t of targets) console.log(`${t.met ? 'MET    ' : 'NOT MET'} ${t.target}: ${f(t.measured)}`);

if (ONLY.length > 0) {
  console.log(`BENCH_API_SCENARIOS narrowed the run: bench/results/api.json left as it was`);
  process.exit(0);
}
mkdirSync(new URL('./results', import.meta.url), { recursive: true });
writeFileSync(new URL('./results/api.json', import.meta.url), JSON.stringify({
  when: new Date().toISOString(),
  commit,
  node: process.version,
  machine: { cpu: cpus()[0]?.model, cpus: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) },
  loadavgAtStart: loadavgStart,
  loadavgAtEnd: loadavg(),
  settings: { seconds: SECONDS, connections: CONNECTIONS, warmupSeconds: WARMUP_SECONDS, fixedRate: RATE, familyFixedRate: FAMILY_RATE, modes: MODES },
  baseline: 'GET /bare on a bare fastify app in the benchmark process, answering a small JSON; measured first and last in each mode, the mean of the two is the denominator',
  latency: 'raw response times of every response as autocannon measured them (hrtime), percentiles over all; autocannon\'s own whole-millisecond histogram is kept as autocannonLatencyMs',
  modes: results,
  targets,
}, null, 2) + '\n');
console.log('written bench/results/api.json');
