/**
 * The drain domain's rules, held by a scan of src/: only src/drains/ asks the
 * lifecycle (`nextState(`); only the destination table (src/destinations/)
 * names a drain type as a string literal, so a branch on a type cannot creep
 * back into a route or a stage; the backoff has one caller (the retry policy);
 * only deliver/request.ts signs.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { DRAIN_TYPES } from '../../../src/destinations/index.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []);
}

const SOURCES = sourceFiles(join(REPO, 'src')).map((f) => ({ path: relative(REPO, f).split('\\').join('/'), text: readFileSync(f, 'utf8') }));

/** `type: 'http'` in an object that also has a `scheme`: an OpenAPI security scheme, not a drain type. */
function isSecurityScheme(node: ts.Node): boolean {
  const prop = node.parent;
  if (!prop || !ts.isPropertyAssignment(prop) || prop.initializer !== node || prop.name.getText() !== 'type') return false;
  const object = prop.parent;
  return ts.isObjectLiteralExpression(object) && object.properties.some((p) => p.name?.getText() === 'scheme');
}

/** The string literals of `text` whose whole value is a drain type, as `line: literal`. */
function drainTypeLiterals(text: string, name = 'scan.ts'): string[] {
  const file = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const types = new Set<string>(DRAIN_TYPES);
  const visit = (node: ts.Node): void => {
    if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && types.has(node.text) && !isSecurityScheme(node)) {
      found.push(`${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Calls of the lifecycle's `nextState`, as `line: text`. */
function nextStateCalls(text: string): string[] {
  return text.split('\n').flatMap((line, i) => (/\bnextState\s*\(/.test(line) && !/^\s*(\*|\/\/)/.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

const offenders = (allowed: RegExp, scan: (text: string, path: string) => string[]) =>
  SOURCES.filter((s) => !allowed.test(s.path)).flatMap((s) => scan(s.text, s.path).map((hit) => `${s.path}:${hit}`));

describe('drain domain rules', () => {
  it('the scanners find what they look for, and not its look-alikes', () => {
    expect(drainTypeLiterals([
      "if (d.type === 'vendor-b') go();",
      'const t = "otlp";',
      'const u = `http`;',
      "const scheme = { type: 'http', scheme: 'bearer' };",
      "const url = 'http://x'; const m = 'vendor-a drains derive their endpoint from site.';",
      "const k = { type: 'http', format: 'json' };",
    ].join('\n'))).toEqual(["1: 'vendor-b'", '2: "otlp"', '3: `http`', "6: 'http'"]);
    expect(nextStateCalls("const m = nextState(drain, 'resumed');\n// nextState(drain) in a comment\nconst movesBy = 1;")).toEqual(["1: const m = nextState(drain, 'resumed');"]);
  });

  it('only src/drains/ asks the lifecycle where an event takes a drain', () => {
    expect(SOURCES.some((s) => s.path.startsWith('src/drains/') && nextStateCalls(s.text).length > 0)).toBe(true);
    expect(offenders(/^src\/drains\//, nextStateCalls)).toEqual([]);
  });

  it('only the destination table names a drain type', () => {
    expect(SOURCES.some((s) => s.path.startsWith('src/destinations/') && drainTypeLiterals(s.text).length > 0)).toBe(true);
    expect(offenders(/^src\/destinations\//, drainTypeLiterals)).toEqual([]);
  });

  it('the backoff has one caller, and one module signs', () => {
    const importers = (module: RegExp) => SOURCES.filter((s) => module.test(s.text)).map((s) => s.path);
    expect(importers(/from '[./]+(deliver\/)?backoff\.js'/)).toEqual(['src/deliver/retry-policy.ts']);
    expect(importers(/\bsignBatch\(/).filter((p) => !p.startsWith('src/sign/'))).toEqual(['src/deliver/request.ts']);
  });
});
