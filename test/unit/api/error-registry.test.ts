/**
 * The error registry and the API's documentation agree: every code the API
 * can answer is defined once, with its status, and listed in docs/api.md's
 * table with that status; every code listed there is registered. No route
 * makes up a code of its own.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineErrors, registeredErrors } from '../../../src/api/kernel/error-registry.js';
// The API with every family: loading it registers every family's codes.
import '../../../src/server.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

function documented(): Map<string, number> {
  const rows = [...readFileSync(join(REPO, 'docs/api.md'), 'utf8').matchAll(/^\| (\d{3}) \| `([A-Za-z_-]+)` \|/gm)];
  return new Map(rows.map((r) => [r[2]!, Number(r[1])]));
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('error registry', () => {
  it('lists every registered code in docs/api.md with its status, and documents no unregistered one', () => {
    const docs = documented();
    const registered = registeredErrors();
    expect(registered.length).toBeGreaterThan(20);
    for (const e of registered) expect(docs.get(e.code), `${e.code} (${e.family}) in docs/api.md`).toBe(e.status);
    const known = new Set(registered.map((e) => e.code));
    for (const code of docs.keys()) expect(known.has(code), `${code} documented but not registered`).toBe(true);
  });

  it('refuses a code a second family defines again', () => {
    expect(() => defineErrors('a-probe-family', { DRAIN_NOT_FOUND: { status: 404, when: 'again' } })).toThrow(/defined by drains already/);
  });

  it('is the only way the API makes an error code: no route writes one of its own', () => {
    const own = sources(join(REPO, 'src/api'))
      .filter((p) => !p.endsWith('kernel/error-registry.ts'))
      .flatMap((p) => [...readFileSync(p, 'utf8').matchAll(/new AppError\(\s*\d{3},\s*'([A-Z_]+)'/g)].map((m) => `${p.slice(REPO.length)}: ${m[1]}`))
      // Programming errors that stop the API from starting; no request ever sees them.
      .filter((s) => !/: (ROUTE_ACCESS_UNDECLARED|ROUTE_SCOPE_UNKNOWN|ROUTE_RETRY_UNSAFE|ACCESS_NOT_ESTABLISHED)$/.test(s));
    expect(own).toEqual([]);
  });
});
