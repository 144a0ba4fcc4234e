/**
 * The copy-paste sessions that open the API pages run as written against a real `logdrain start`
 * seeded with examples/seed.json, and answer what the pages show.
 *
 * An example is a ```sh block directly followed by a ```json block: the shell block runs in bash
 * (in page order, the variables it assigns carried to the next blocks of the page), its output is
 * parsed as JSON and held to the documented answer's shape: every documented key is present with a
 * value of the same type, arrays compared element by element as far as the page shows them, so an
 * abbreviated answer passes and a renamed or retyped field does not. A page's whole answer that is
 * a number or a string (a status code printed by curl) must be equal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, chmod, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnLogdrain, type LogdrainProcess } from '../../helpers/processes.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PAGES = ['docs/api.md', 'docs/api-telephony.md', 'docs/api-persona.md', 'docs/api-channels.md', 'docs/api-workflows.md', 'docs/api-skills.md', 'docs/api-templates.md'];

interface Example {
  sh: string;
  json: string;
  /** 1-based line of the ```sh fence. */
  line: number;
}

/** The page's examples: each ```sh block whose next block, after blank lines only, is ```json. */
function examplesOf(markdown: string): Example[] {
  const found: Example[] = [];
  const re = /^```sh\n([\s\S]*?)^```\n(?:[ \t]*\n)*```json\n([\s\S]*?)^```$/gm;
  for (const m of markdown.matchAll(re)) {
    found.push({ sh: m[1]!, json: m[2]!, line: markdown.slice(0, m.index).split('\n').length });
  }
  return found;
}

/** Names a shell block assigns (`NAME=...` at a line's start or after `;`, `&&`). */
function assignedNames(sh: string): string[] {
  return [...new Set([...sh.matchAll(/(?:^|[;&|]\s*)([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]!))];
}

/** Where `actual` departs from the documented shape (empty: it fits). */
function shapeProblems(documented: unknown, actual: unknown, at = '$'): string[] {
  const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (kind(documented) !== kind(actual)) return [`${at}: documented ${kind(documented)}, answered ${kind(actual)} (${JSON.stringify(actual)?.slice(0, 200)})`];
  if (Array.isArray(documented)) {
    const got = actual as unknown[];
    if (got.length < documented.length) return [`${at}: documented ${documented.length} entries, answered ${got.length}`];
    return documented.flatMap((d, i) => shapeProblems(d, got[i], `${at}[${i}]`));
  }
  if (kind(documented) === 'object') {
    const got = actual as Record<string, unknown>;
    return Object.entries(documented as Record<string, unknown>).flatMap(([k, d]) =>
      k in got ? shapeProblems(d, got[k], `${at}.${k}`) : [`${at}.${k}: documented, not answered`]);
  }
  return [];
}

const run = (file: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { ...opts, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });

/**
 * A stand-in for `jq -r <path>` (paths like `.id`, `.numbers[0].msisdn`) where jq is not
 * installed: the pages use only that form to keep an id from an answer.
 */
const JQ_STAND_IN = `#!/usr/bin/env node
const args = process.argv.slice(2);
const raw = args[0] === '-r';
const [filter, file] = raw ? args.slice(1) : args;
const text = file ? require('node:fs').readFileSync(file, 'utf8') : require('node:fs').readFileSync(0, 'utf8');
let v = JSON.parse(text);
for (const m of filter.matchAll(/\\.([A-Za-z_][A-Za-z0-9_]*)|\\[(\\d+)\\]/g)) v = v == null ? null : v[m[1] ?? Number(m[2])];
process.stdout.write((raw && typeof v === 'string' ? v : JSON.stringify(v ?? null)) + '\\n');
`;

describe('the API pages\' examples', () => {
  it('are found where the pages mark them', () => {
    const page = '```sh\nA=$(x | jq -r .id); B=1\ncurl a\n```\n\n```json\n{"a": 1}\n```\n\n```sh\nnot an example\n```\ntext\n```json\n{}\n```\n';
    const found = examplesOf(page);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ json: '{"a": 1}\n', line: 1 });
    expect(assignedNames(found[0]!.sh)).toEqual(['A', 'B']);
  });

  it('compare shapes, not values', () => {
    expect(shapeProblems({ id: 'x', n: 1, a: [{ k: true }], z: null }, { id: 'y', n: 2, a: [{ k: false, more: 1 }, {}], z: null, extra: 'ok' })).toEqual([]);
    expect(shapeProblems({ id: 'x' }, { ID: 'x' })).toEqual(['$.id: documented, not answered']);
    expect(shapeProblems({ n: 1 }, { n: '1' })[0]).toMatch(/^\$\.n: documented number, answered string/);
    expect(shapeProblems({ a: [{ k: 1 }] }, { a: [] })).toEqual(['$.a: documented 1 entries, answered 0']);
    expect(shapeProblems({ v: null }, { v: {} })[0]).toMatch(/documented null, answered object/);
  });
});

describe('the API pages\' copy-paste sessions, run against logdrain start', () => {
  let app: LogdrainProcess;
  let port: number;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const curl = await run('sh', ['-c', 'command -v curl']);
    expect(curl.code, 'the examples need curl on the PATH').toBe(0);
    dir = await mkdtemp(join(tmpdir(), 'logdrain-docs-'));
    const bin = join(dir, 'bin');
    await mkdir(bin);
    if ((await run('sh', ['-c', 'command -v jq'])).code !== 0) {
      await writeFile(join(bin, 'jq'), JQ_STAND_IN);
      await chmod(join(bin, 'jq'), 0o755);
    }
    env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir, LC_ALL: 'C' };
    // The quick start's server: embedded defaults, the example seed, localhost allowed as a destination.
    app = spawnLogdrain(['start'], {
      DATA_DIR: 'memory://', PORT: '0', HOST: '127.0.0.1', SEED_FILE: join(ROOT, 'examples/seed.json'),
      DRAIN_ENDPOINT_ALLOW_HOSTS: 'localhost',
    });
    port = (await app.waitForEvent('process.started', 90_000)).port as number;
  });

  afterAll(async () => {
    if (app) {
      app.kill('SIGTERM');
      await app.exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("README's produce command sends records named as the seed names their agent", async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const line = readme.split('\n').map((l) => l.trim()).find((l) => l.startsWith('node dist/cli.js produce '));
    expect(line, 'the quick start runs produce').toBeDefined();
    const args = line!.replace(/^node dist\/cli\.js /, '').replace('http://localhost:8080', `http://127.0.0.1:${port}`).split(/\s+/);
    const produced = spawnLogdrain([...args, '--count', '20'], {});
    expect((await produced.exited).code, produced.stderr.join('\n')).toBe(0);
    const names = new Map<string, string>();
    const seed = JSON.parse(await readFile(join(ROOT, 'examples/seed.json'), 'utf8')) as { agents: { id: string; name: string }[] };
    for (const a of seed.agents) names.set(a.id, a.name);
    // Read back from the platform's copy once a worker has consumed them (this runs before the pages' sessions add records).
    let logs: { agentId: string; agentName: string }[] = [];
    for (const deadline = Date.now() + 20_000; logs.length < 20 && Date.now() < deadline;) {
      const res = await fetch(`http://127.0.0.1:${port}/admin/orgs/org_acme/logs?since=1h&limit=100`, { headers: { authorization: 'Bearer lk_demo_admin' } });
      logs = ((await res.json()) as { logs: { agentId: string; agentName: string }[] }).logs;
      if (logs.length < 20) await new Promise((r) => setTimeout(r, 200));
    }
    expect(logs).toHaveLength(20);
    for (const l of logs) expect(l.agentName, l.agentId).toBe(names.get(l.agentId));
  });

  for (const page of PAGES) {
    it(`${page}: every example answers what the page shows`, async () => {
      const examples = examplesOf(await readFile(join(ROOT, page), 'utf8'));
      // Each page opens with a session: creating, reading and changing at least.
      expect(examples.length, `${page} has its copy-paste session`).toBeGreaterThanOrEqual(3);
      const state = join(dir, `${page.replace(/\W/g, '_')}.state.sh`);
      await writeFile(state, '');
      for (const ex of examples) {
        const where = `${page}:${ex.line}`;
        const documented: unknown = JSON.parse(ex.json);
        // The quick start's port, as written in the pages, is this server's.
        const sh = ex.sh.replaceAll('localhost:8080', `localhost:${port}`);
        const names = assignedNames(ex.sh);
        const script = `. '${state}'\n${sh}\n${names.length > 0 ? `declare -p ${names.join(' ')} >> '${state}'\n` : ''}`;
        const out = await run('bash', ['-c', script], { cwd: dir, env, timeout: 30_000 });
        expect(out.code, `${where} exits 0; stderr: ${out.stderr}`).toBe(0);
        let answer: unknown;
        try {
          answer = JSON.parse(out.stdout);
        } catch {
          throw new Error(`${where}: the output is not one JSON document:\n${out.stdout.slice(0, 2000)}`);
        }
        if (typeof documented !== 'object' || documented === null) expect(answer, where).toEqual(documented);
        else expect(shapeProblems(documented, answer), `${where} answered ${out.stdout.slice(0, 1500)}`).toEqual([]);
      }
    });
  }
});
