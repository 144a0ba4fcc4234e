/**
 * The tests mirror src/: a family's tests sit under test/<kind>/modules/<family>/, and every such
 * folder names a family of src/modules/, so a family renamed or removed cannot leave tests behind
 * under a name nothing in src/ answers to.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

const folders = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);

/** Every `modules` folder under `root`, as paths. */
function modulesFolders(root: string): string[] {
  const found: string[] = [];
  for (const name of folders(root)) {
    const path = join(root, name);
    if (name === 'modules') found.push(path);
    else if (name !== 'node_modules') found.push(...modulesFolders(path));
  }
  return found;
}

/** The entries of test `modules` folders that name no family: folders that are not one, and files outside any. */
function strays(modulesDirs: readonly { path: string; entries: readonly { name: string; folder: boolean }[] }[], families: ReadonlySet<string>): string[] {
  return modulesDirs.flatMap(({ path, entries }) => entries.filter((e) => !e.folder || !families.has(e.name)).map((e) => `${path}/${e.name}`));
}

const families = new Set(folders(join(REPO, 'src/modules')));
const testModules = modulesFolders(join(REPO, 'test')).map((path) => ({
  path: relative(REPO, path),
  entries: readdirSync(path, { withFileTypes: true }).map((e) => ({ name: e.name, folder: e.isDirectory() })),
}));

describe('test layout', () => {
  it('finds the family test folders of both kinds', () => {
    expect(testModules.map((m) => m.path).sort()).toEqual(['test/integration/modules', 'test/unit/modules']);
  });

  it('names an existing src/modules/<family> in every test modules/<family> folder', () => {
    expect(families.size).toBeGreaterThan(0);
    expect(strays(testModules, families)).toEqual([]);
  });

  it('reports a folder that names no family, and a file outside any family folder', () => {
    const probe = [{ path: 'test/unit/modules', entries: [{ name: 'drains', folder: true }, { name: 'drain', folder: true }, { name: 'loose.test.ts', folder: false }] }];
    expect(strays(probe, new Set(['drains']))).toEqual(['test/unit/modules/drain', 'test/unit/modules/loose.test.ts']);
  });
});
