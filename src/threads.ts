/**
 * Worker threads of the process's own modules: the embedded store's, the scrub pool's and the
 * ingest body reader's.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A worker running `entry` (a module's URL without its extension, beside its caller's): the build's
 * JavaScript, or (running from the TypeScript source, as the tests do) the source through tsx,
 * registered inside the worker: Node 20 applies no loader to a worker's entry file. None of the
 * process's Node options: a module preloaded with `--import` (a monitor, an agent) belongs to the
 * main thread, and `--input-type` refuses a file as the entry.
 */
export function startModuleWorker(entry: URL, options: Omit<WorkerOptions, 'eval' | 'execArgv'> = {}): Worker {
  const withOptions = { ...options, execArgv: [] };
  const js = new URL(`${entry.href}.js`);
  if (existsSync(fileURLToPath(js))) return new Worker(js, withOptions);
  const ts = JSON.stringify(`${entry.href}.ts`);
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${ts}); })`, { ...withOptions, eval: true });
}
