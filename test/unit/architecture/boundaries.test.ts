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
  const kernelProbe = join(REPO, 'src/api/kernel/__probe__.ts');
  afterAll(() => {
    rmSync(kernelProbe, { force: true });
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

  it('report a family or the API importing an engine stage, the worker or an engine type', () => {
    mkdirSync(probes, { recursive: true });
    writeFileSync(join(probes, 'engine.ts'), [
      "import { createDeliverer } from '../../deliver/deliverer.js';",
      "import type { Accountant } from '../../account/accountant.js';",
      "import { startWorker } from '../../worker.js';",
      'export const a = [createDeliverer, startWorker];',
      'export type B = Accountant;',
      '',
    ].join('\n'));
    writeFileSync(kernelProbe, "import { serviceBatch } from '../../batch/service-batch.js';\nexport const probe = serviceBatch;\n");
    const found = cruise([join(probes, 'engine.ts'), kernelProbe]).filter((v) => v.rule.name === 'modules-not-to-engine').map((v) => `${v.from} -> ${v.to}`);
    expect(found).toEqual(expect.arrayContaining([
      'src/modules/__probe_a__/engine.ts -> src/deliver/deliverer.ts',
      'src/modules/__probe_a__/engine.ts -> src/account/accountant.ts',
      'src/modules/__probe_a__/engine.ts -> src/worker.ts',
      'src/api/kernel/__probe__.ts -> src/batch/service-batch.ts',
    ]));
  });
});
