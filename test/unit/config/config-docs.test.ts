/**
 * docs/operations.md's variable table is held to the configuration schema: every variable the
 * schema reads is documented with its default, and every documented variable is one the schema
 * reads (a row for a variable nothing reads would mislead an operator).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/config.js';
import { envVariables, type EnvVariable } from '../../../src/config/env-schema.js';

const DOC = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8');

/** The rows of the table under `## Configuration`: each row's variables and its default cell, one per variable. */
function documented(): Map<string, string> {
  const section = DOC.slice(DOC.indexOf('\n## Configuration\n'));
  const table = section.slice(section.indexOf('| variable | default | meaning |'));
  const rows = table.split('\n').slice(2).filter((l) => l.startsWith('|')).map((l) => l.split(' | '));
  const out = new Map<string, string>();
  for (const [first, dflt] of rows) {
    const names = [...first!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!);
    // A row of several variables lists their defaults in the same order, comma-separated, or one
    // default (`unset`) that is each one's.
    const split = names.length > 1 ? dflt!.split(', ') : [dflt!];
    const defaults = split.length === 1 ? names.map(() => split[0]!) : split;
    names.forEach((n, i) => out.set(n, (defaults[i] ?? `${split.length} defaults for ${names.length} variables`).replace(/`/g, '').replace(/ \(.*\)$/, '').trim()));
  }
  return out;
}

/** The default as the table may write it (an empty list is `empty`, or `unset` where unset means off). */
function written(v: EnvVariable): string[] {
  if (v.default === undefined) return ['unset'];
  if (Array.isArray(v.default)) return v.default.length === 0 ? ['empty', 'unset'] : [v.default.join(', ')];
  return [String(v.default)];
}

describe('the configuration table of docs/operations.md', () => {
  const variables = envVariables(configSchema);
  let table: Map<string, string>;
  beforeAll(() => {
    table = documented();
  });

  it('documents every variable of the schema with its default', () => {
    const wrong = variables.filter((v) => !written(v).includes(table.get(v.env) ?? '')).map((v) => `${v.env}: documented ${table.get(v.env) ?? 'nowhere'}, default ${written(v)[0]}`);
    expect(wrong).toEqual([]);
  });

  it('documents no variable the schema does not read', () => {
    const read = new Set(variables.map((v) => v.env));
    expect([...table.keys()].filter((n) => !read.has(n))).toEqual([]);
  });
});
