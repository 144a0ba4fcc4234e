/**
 * The import boundaries of .dependency-cruiser.cjs hold for src/, and the
 * rules bite: a probe file that breaks each one is reported.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = join(REPO, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation { rule: { name: string }; from: string; to: string }

function cruise(paths: string[]): Violation[] {
  const out = execFileSync(process.execPath, [CLI, ...paths, '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('import boundaries', () => {
  const probes = join(REPO, 'src/modules/__probe_a__');
  const other = join(REPO, 'src/modules/__probe_b__');
  const engineProbe = join(REPO, 'src/deliver/__probe__.ts');
  afterAll(() => {
    rmSync(probes, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
    rmSync(engineProbe, { force: true });
  });

  it('hold for the source tree', () => {
    expect(cruise(['src']).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  it('report a family importing another, and the engine importing the REST layer', () => {
    mkdirSync(probes, { recursive: true });
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'index.ts'), 'export const b = 1;\n');
    writeFileSync(join(probes, 'index.ts'), "import { b } from '../__probe_b__/index.js';\nimport { buildApi } from '../../api/server.js';\nexport const a = [b, buildApi];\n");
    writeFileSync(engineProbe, "import { buildApi } from '../api/server.js';\nexport const probe = buildApi;\n");
    const found = cruise([probes, other, engineProbe]).map((v) => `${v.rule.name}: ${v.from}`);
    expect(found).toContain('families-apart: src/modules/__probe_a__/index.ts');
    expect(found).toContain('engine-not-to-api: src/deliver/__probe__.ts');
  });
});
