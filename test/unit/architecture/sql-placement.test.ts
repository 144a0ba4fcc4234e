/**
 * Where SQL runs: a statement (`.query(`, `.exec(`, `.copyIn(` on a store handle) is written only in
 * a repository (`repository.ts`, or `<aggregate>-repository.ts` in a family that names every role
 * by its aggregate), a family's `sql/` folder, the store (`src/store/`), the drain tables the
 * engine shares with the drains family (`src/modules/drains/tables/`), a migration, or a file of
 * the allow-list below with its reason. Postgres' unique-violation code (23505) is read in the same
 * places only: a route or service asks the repository's named predicate. A family names its
 * repository files one way (no `repo.ts`).
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative, sep } from 'node:path';

const SRC = fileURLToPath(new URL('../../../src', import.meta.url));

/** Files outside the usual places that run statements, each with why. */
const STATEMENTS_ALLOWED: Record<string, string> = {
  'src/seed/apply.ts': "the seed writer: the store kernel's seed rows (organizations, users, agents, keys), in the one transaction every family's seed section joins",
};

/** Files outside the usual places that read code 23505, each with why. */
const UNIQUE_CODE_ALLOWED: Record<string, string> = {
  'src/modules/drains/crud.ts': 'moves to the drains repository',
};

const inRepositoryPlace = (path: string): boolean =>
  path.startsWith('src/store/')
  || path.startsWith('src/modules/drains/tables/')
  || /(^|\/)sql\//.test(path)
  || /(^|\/)([a-z0-9]+-)?repository\.ts$/.test(path)
  || /(^|\/)([a-z0-9]+-)?migrations?\.ts$/.test(path)
  || /(^|\/)migrations\//.test(path);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** The text without its comments (block comments, and line comments after a space or at a line's start). */
const withoutComments = (text: string): string =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');

/**
 * The statement calls in `text`: `.query(` and `.copyIn(` (with or without type arguments), and
 * `.exec(` on a handle (not on a regular expression: a literal, or a name in capitals or ending in
 * `RE`, `Re`, `Regex` or `Pattern`).
 */
export function statementCalls(text: string): string[] {
  const found: string[] = [];
  const code = withoutComments(text);
  for (const m of code.matchAll(/\.(query|copyIn)\s*(<(?:[^<>()]|<[^<>()]*>)*>)?\s*\(/g)) found.push(m[0]);
  for (const m of code.matchAll(/(^|[^\w$])([\w$]+)\s*\.exec\s*\(/g)) {
    const before = code[m.index + m[1]!.length - 1];
    const name = m[2]!;
    if (before === '/' || /^[A-Z0-9_]+$/.test(name) || /(RE|Re|Regex|Pattern)$/.test(name)) continue;
    found.push(`${name}.exec(`);
  }
  return found;
}

const files = sourceFiles(SRC).map((full) => ({ path: relative(join(SRC, '..'), full).split(sep).join('/'), text: readFileSync(full, 'utf8') }));

describe('SQL placement', () => {
  it('finds statement calls and tells a regular expression from a handle', () => {
    expect(statementCalls("await tx.query<{ a: number; b: Array<string> }>('select 1')")).toHaveLength(1);
    expect(statementCalls('await store.sql.query(`select 1`); await sql.exec(text); await client.copyIn(t, rows);')).toHaveLength(3);
    expect(statementCalls('const m = RFC3339_RE.exec(raw); const n = /^a$/i.exec(s); const o = OPEN.exec(line); const p = datePattern.exec(x);')).toEqual([]);
    expect(statementCalls('// await sql.query(x)\n/* tx.query(y) */ const a = 1;')).toEqual([]);
  });

  it('runs statements only in repositories, sql/ folders, the store, migrations and the allow-list', () => {
    const misplaced = files
      .filter((f) => !inRepositoryPlace(f.path) && STATEMENTS_ALLOWED[f.path] === undefined)
      .flatMap((f) => statementCalls(f.text).map((call) => `${f.path}: ${call}`));
    expect(misplaced).toEqual([]);
  });

  it('keeps each allow-list entry needed and reasoned', () => {
    for (const [path, reason] of Object.entries(STATEMENTS_ALLOWED)) {
      const f = files.find((x) => x.path === path);
      expect(reason.length, path).toBeGreaterThan(20);
      expect(f && statementCalls(f.text).length, `${path} is allowed statements it no longer runs`).toBeGreaterThan(0);
    }
    for (const [path, reason] of Object.entries(UNIQUE_CODE_ALLOWED)) {
      expect(reason.length, path).toBeGreaterThan(10);
    }
  });

  it('reads the unique-violation code only where statements run', () => {
    const misplaced = files
      .filter((f) => !inRepositoryPlace(f.path) && UNIQUE_CODE_ALLOWED[f.path] === undefined)
      .filter((f) => /['"`]23505['"`]/.test(withoutComments(f.text)))
      .map((f) => f.path);
    expect(misplaced).toEqual([]);
  });

  it('names a family repository repository.ts (or <aggregate>-repository.ts), never repo.ts', () => {
    const misnamed = files.filter((f) => f.path.startsWith('src/modules/') && /(^|\/|-)repo\.ts$/.test(f.path)).map((f) => f.path);
    expect(misnamed).toEqual([]);
  });
});
