/**
 * The import boundaries of .dependency-cruiser.cjs hold for src/, and the
 * rules bite: a probe file that breaks each one is reported. Probes are
 * written into a copy of the tree in a temporary folder, never into src/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = join(REPO, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation { rule: { name: string }; from: string; to: string }

function cruise(cwd: string, paths: string[]): Violation[] {
  const out = execFileSync(process.execPath, [CLI, ...paths, '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

const describeViolations = (vs: Violation[]) => vs.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);

describe('import boundaries', () => {
  let copy: string;
  /** Writes a probe file into the copy of the tree; answers its path relative to the copy. */
  const probe = (path: string, text: string): string => {
    mkdirSync(dirname(join(copy, path)), { recursive: true });
    writeFileSync(join(copy, path), text);
    return path;
  };

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'logdrain-boundaries-'));
    cpSync(join(REPO, 'src'), join(copy, 'src'), { recursive: true });
    for (const f of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json']) cpSync(join(REPO, f), join(copy, f));
    symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'), 'dir');
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('hold for the source tree', () => {
    expect(describeViolations(cruise(REPO, ['src']))).toEqual([]);
  });

  it('report a family importing another, and the engine importing the REST layer', () => {
    probe('src/modules/__probe_b__/index.ts', 'export const b = 1;\n');
    const a = probe('src/modules/__probe_a__/index.ts', "import { b } from '../__probe_b__/index.js';\nimport { buildApi } from '../../server.js';\nexport const a = [b, buildApi];\n");
    const engine = probe('src/deliver/__probe__.ts', "import { buildApi } from '../server.js';\nexport const probe = buildApi;\n");
    const found = cruise(copy, [a, engine]).map((v) => `${v.rule.name}: ${v.from}`);
    expect(found).toContain('families-apart: src/modules/__probe_a__/index.ts');
    expect(found).toContain('engine-not-to-api: src/deliver/__probe__.ts');
  });

  it('report a family or the API importing an engine stage, the worker or an engine type', () => {
    const family = probe('src/modules/__probe_a__/engine.ts', [
      "import { createDeliverer } from '../../deliver/deliverer.js';",
      "import type { Accountant } from '../../account/accountant.js';",
      "import { startWorker } from '../../worker.js';",
      "import { compilePlan } from '../../plan/drain-plans.js';",
      "import { ParkingSet } from '../../backlog/parking.js';",
      'export const a = [createDeliverer, startWorker, compilePlan, ParkingSet];',
      'export type B = Accountant;',
      '',
    ].join('\n'));
    const kernel = probe('src/api/kernel/__probe__.ts', "import { serviceBatch } from '../../batch/service-batch.js';\nexport const probe = serviceBatch;\n");
    const found = cruise(copy, [family, kernel]).filter((v) => v.rule.name === 'modules-not-to-engine').map((v) => `${v.from} -> ${v.to}`);
    expect(found).toEqual(expect.arrayContaining([
      'src/modules/__probe_a__/engine.ts -> src/deliver/deliverer.ts',
      'src/modules/__probe_a__/engine.ts -> src/account/accountant.ts',
      'src/modules/__probe_a__/engine.ts -> src/worker.ts',
      'src/modules/__probe_a__/engine.ts -> src/plan/drain-plans.ts',
      'src/modules/__probe_a__/engine.ts -> src/backlog/parking.ts',
      'src/api/kernel/__probe__.ts -> src/batch/service-batch.ts',
    ]));
  });

  it('report a family importing the whole store, or a table the engine writes that is not its own, and the store kernel importing one', () => {
    const probes: [file: string, imports: string[], rule: string][] = [
      ['src/modules/telephony/__probe_store__.ts', ['../../store/store.js'], 'families-kernel-store-only'],
      ['src/modules/telephony/__probe_drains__.ts', ['../drains/tables/drains.js', '../drains/tables/index.js'], 'drain-tables-drains-family-only'],
      ['src/api/kernel/__probe_drains__.ts', ['../../modules/drains/tables/backlog.js'], 'drain-tables-drains-family-only'],
      ['src/modules/workflows/__probe_logs__.ts', ['../logs/repository.js'], 'log-copy-logs-family-only'],
      ['src/store/__probe_kernel__.ts', ['../modules/drains/tables/deliveries.js', '../modules/logs/repository.js'], 'store-kernel-knows-no-engine-table'],
    ];
    const files = probes.map(([file, imports]) =>
      probe(file, `${imports.map((m, i) => `import * as m${i} from '${m}';`).join('\n')}\nexport const probe = [${imports.map((_, i) => `m${i}`).join(', ')}];\n`));
    // The record sink port imports nothing (put back after this cruise: other probes reach it);
    // the drains and logs families import their own tables.
    const sink = readFileSync(join(copy, 'src/source/sink.ts'), 'utf8');
    files.push(probe('src/source/sink.ts', "import { createKafkaSink } from './kafka-sink.js';\nexport const probe = createKafkaSink;\nexport interface RecordSink { write(records: readonly { orgId: string; payload: string }[]): Promise<void> }\n"));
    files.push(probe('src/modules/drains/__probe_own__.ts', "import { createDrainTables } from './tables/index.js';\nexport const probe = createDrainTables;\n"));
    files.push(probe('src/modules/logs/__probe_own__.ts', "import type { LogReads } from './repository.js';\nexport type Probe = LogReads;\n"));
    const found = describeViolations(cruise(copy, files));
    writeFileSync(join(copy, 'src/source/sink.ts'), sink);
    for (const [file, imports, rule] of probes) {
      for (const m of imports) expect(found).toContain(`${rule}: ${file} -> ${join(dirname(file), m).replace(/\.js$/, '.ts')}`);
    }
    expect(found).toContain('record-sink-port-alone: src/source/sink.ts -> src/source/kafka-sink.ts');
    expect(found.filter((v) => v.includes('__probe_own__'))).toEqual([]);
  });

  it('report every engine layer importing one above it, telemetry importing a stage or the store, the store importing the seed reader, and the drain domain out of its place', () => {
    // One probe per rule, each importing from the layer just above its own (and the top one).
    const probes: [file: string, imports: string[], rule: string][] = [
      ['src/model/__probe__.ts', ['../select/selector.js'], 'layer-model-not-upward'],
      ['src/encode/__probe__.ts', ['../plan/drain-plans.js'], 'layer-stages-not-upward'],
      ['src/plan/__probe__.ts', ['../batch/batcher.js'], 'layer-plan-not-upward'],
      ['src/batch/__probe__.ts', ['../account/accountant.js'], 'layer-batch-not-upward'],
      ['src/account/__probe__.ts', ['../deliver/deliverer.js'], 'layer-account-not-upward'],
      ['src/deliver/__probe__.ts', ['../backlog/backlog-pump.js'], 'layer-deliver-not-upward'],
      ['src/backlog/__probe__.ts', ['../pipeline/pipeline.js'], 'layer-backlog-not-upward'],
      ['src/pipeline/__probe__.ts', ['../source/source.js', '../worker.js'], 'layer-pipeline-not-upward'],
      ['src/telemetry/__probe__.ts', ['../deliver/outcome.js', '../store/store.js'], 'telemetry-not-to-engine'],
      ['src/store/__probe__.ts', ['../seed/seed-file.js'], 'store-not-to-seed'],
      ['src/drains/__probe__.ts', ['../plan/drain-plans.js', '../deliver/probes.js', '../modules/drains/index.js', '../api/kernel/auth.js', '../server.js'], 'drains-domain-below-its-users'],
      ['src/drains/__probe_store__.ts', ['../modules/drains/tables/drains.js'], 'drains-domain-store-types-only'],
      ['src/model/__probe_drains__.ts', ['../drains/move.js'], 'drains-domain-not-below'],
      ['src/store/__probe_drains__.ts', ['../drains/lifecycle.js'], 'drains-domain-not-below'],
    ];
    const files = probes.map(([file, imports]) =>
      probe(file, `${imports.map((m, i) => `import * as m${i} from '${m}';`).join('\n')}\nexport const probe = [${imports.map((_, i) => `m${i}`).join(', ')}];\n`));
    // The drain domain may name the store's types (it is handed the store by its caller).
    files.push(probe('src/drains/__probe_types__.ts', "import type { UnitOfWork } from '../store/unit-of-work.js';\nexport type Probe = UnitOfWork;\n"));
    const found = describeViolations(cruise(copy, files));
    for (const [file, imports, rule] of probes) {
      for (const m of imports) {
        const to = join(dirname(file), m).replace(/\.js$/, '.ts');
        expect(found).toContain(`${rule}: ${file} -> ${to}`);
      }
    }
    // The tree the probes were written into breaks nothing else.
    expect(found.filter((v) => !probes.some(([file]) => v.includes(`: ${file} -> `)))).toEqual([]);
  });
  it("report the families' persistence importing above itself, the engine importing any other part of a family, and the migration list importing a table", () => {
    const probes: [file: string, imports: string[], rule: string][] = [
      ['src/modules/drains/tables/__probe__.ts', ['../routes.js', '../service.js', '../schemas.js', '../../../api/kernel/pagination.js', '../../../store/store.js', '../../../deliver/outcome.js', '../../../drains/move.js'], 'family-persistence-below-the-engine'],
      ['src/modules/drains/migrations/__probe__.ts', ['../index.js'], 'family-persistence-below-the-engine'],
      ['src/backlog/__probe_family__.ts', ['../modules/drains/service.js', '../modules/logs/list.js'], 'engine-not-to-api'],
      ['src/store/migrations/__probe__.ts', ['../../modules/drains/tables/backlog.js'], 'store-migrations-only-drain-migrations'],
    ];
    const files = probes.map(([file, imports]) =>
      probe(file, `${imports.map((m, i) => `import * as m${i} from '${m}';`).join('\n')}\nexport const probe = [${imports.map((_, i) => `m${i}`).join(', ')}];\n`));
    // The engine and the drain domain (types only) may import the persistence they write.
    files.push(probe('src/deliver/__probe_own__.ts', "import { createCircuitsRepo } from '../modules/drains/tables/circuits.js';\nimport { createLogsRepo } from '../modules/logs/repository.js';\nexport const probe = [createCircuitsRepo, createLogsRepo];\n"));
    files.push(probe('src/drains/__probe_own__.ts', "import type { DrainUnitOfWork } from '../modules/drains/tables/index.js';\nexport type Probe = DrainUnitOfWork;\n"));
    const found = describeViolations(cruise(copy, files));
    for (const [file, imports, rule] of probes) {
      for (const m of imports) expect(found).toContain(`${rule}: ${file} -> ${join(dirname(file), m).replace(/\.js$/, '.ts')}`);
    }
    expect(found.filter((v) => v.includes('__probe_own__'))).toEqual([]);
  });
});
