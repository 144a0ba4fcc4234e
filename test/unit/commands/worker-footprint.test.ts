/**
 * A `logdrain worker` loads none of the API: what its role imports (the process composition, the
 * engine, the families' background work, the vendors) reaches neither fastify nor a family's
 * routes, nor the model provider's, media server's and SMTP SDKs (loaded on their first call).
 * The API's code would cost every worker tens of megabytes of memory for nothing, and one stray
 * import brings all of it back, which this test catches.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * Every package and source file a fresh process has loaded after importing `modules`: CommonJS
 * from require's cache, ES modules (tsx's compiled TypeScript among them) from a load hook that
 * reports each URL it loads.
 */
function loadedBy(modules: readonly string[]): { packages: string[]; sources: string[] } {
  const hooks = 'let port; export function initialize(d) { port = d.port; } export async function load(url, context, next) { port.postMessage(url); return next(url, context); }';
  const script = [
    "import { createRequire, register } from 'node:module';",
    "import { MessageChannel } from 'node:worker_threads';",
    'const { port1, port2 } = new MessageChannel();',
    'const urls = [];',
    "port1.on('message', (u) => urls.push(u));",
    `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)}, { data: { port: port2 }, transferList: [port2] });`,
    ...modules.map((m) => `await import(${JSON.stringify(`./${m}`)});`),
    'await new Promise((r) => setTimeout(r, 200));',
    'port1.close();',
    'const loaded = [...urls, ...Object.keys(createRequire(import.meta.url).cache)];',
    "const packages = [...new Set(loaded.map((p) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(p)?.[1]).filter(Boolean))];",
    "const sources = [...new Set(loaded.filter((p) => p.includes('/src/')).map((p) => p.slice(p.indexOf('/src/') + 1)))];",
    'process.stdout.write(JSON.stringify({ packages, sources }));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8' });
  return JSON.parse(out) as { packages: string[]; sources: string[] };
}

describe('the worker role', () => {
  it('loads neither fastify, nor any family\'s routes, nor the SDKs of vendors it never calls', { timeout: 60_000 }, () => {
    const worker = loadedBy(['src/commands/run.ts', 'src/worker.ts', 'src/modules/background.ts', 'src/vendors/index.ts']);
    expect(worker.packages).toContain('kafkajs');
    expect(worker.sources).toContain('src/worker.ts');
    expect(worker.packages.filter((p) => /fastify|^openai$|^livekit-server-sdk$|^nodemailer$/.test(p))).toEqual([]);
    expect(worker.sources.filter((s) => s === 'src/server.ts' || /^src\/modules\/[^/]+\/routes\.ts$/.test(s))).toEqual([]);
  });

  it('is told apart: the API process loads both', { timeout: 60_000 }, () => {
    const api = loadedBy(['src/server.ts']);
    expect(api.packages).toContain('fastify');
    expect(api.sources).toContain('src/modules/drains/routes.ts');
  });
});
