/** Starts logdrain in-process (start or serve) on an ephemeral port, configured the way an operator would. */
import { expect } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { run, type Role, type Running } from '../../src/commands/run.js';
import { createWriteStream } from 'node:fs';
import { basename } from 'node:path';
import { createLogger, type Logger } from '../../src/telemetry/logger.js';

export const SEED_FIXTURE = new URL('../fixtures/seed-acme.json', import.meta.url).pathname;

export interface TestApp extends Running {
  base: string;
  request(method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
}

/** The last event lines (debug and up) of the in-process apps of this test file, printed when a test fails (failure-logs.ts). */
const recent: string[] = [];
const RECENT_MAX = 400;
export const recentAppLogs = (): readonly string[] => recent;

/**
 * Debug into a ring of recent event lines (API request lines left out), and
 * also into `<TEST_LOG_DIR>/<file>.log` when TEST_LOG_DIR names a directory.
 */
function testLogger(): Logger {
  const dir = process.env.TEST_LOG_DIR;
  const file = dir ? createWriteStream(`${dir}/${basename(expect.getState().testPath ?? 'app')}.log`, { flags: 'a' }) : undefined;
  return createLogger('debug', 'test-app', {
    write(line: string) {
      file?.write(line);
      if (!line.includes('"event":')) return;
      recent.push(line.length > 600 ? `${line.slice(0, 600)}...` : line.trimEnd());
      if (recent.length > RECENT_MAX) recent.splice(0, recent.length - RECENT_MAX);
    },
  });
}

export async function startApp(env: Record<string, string>, role: Role = 'start', logger: Logger = testLogger()): Promise<TestApp> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: 'memory://', SEED_FILE: SEED_FIXTURE, BATCH_LINGER_MS: '100', DRAIN_REFRESH_MS: '100', ...env });
  const running = await run(role, config, logger);
  const base = `http://127.0.0.1:${running.port}`;
  return {
    ...running,
    base,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(base + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text.length > 0 ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
  };
}

export async function waitFor<T>(fn: () => T | Promise<T>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? 'a condition'}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
