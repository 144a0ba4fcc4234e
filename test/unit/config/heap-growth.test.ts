/**
 * The heap growth setting reaches V8: a flag V8 does not know is dropped with no more than a line
 * on stderr, so a Node whose V8 renamed it would silently lose the memory bound the benchmarks
 * measured. Run in a fresh process, as a worker starts.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('../../../dist/config/heap-growth.js', import.meta.url));

describe('applyHeapGrowing', () => {
  it("sets a flag this Node's V8 knows", () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', `import { applyHeapGrowing } from ${JSON.stringify(MODULE)}; applyHeapGrowing(100); console.log('applied');`], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('applied');
    expect(run.stderr).not.toMatch(/unrecognized flag/);
  });

  it('would notice a flag V8 does not know (the check above can fail)', () => {
    const run = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString('--heap-growing-percentage=100')`], { encoding: 'utf8' });
    expect(run.stderr).toMatch(/unrecognized flag/);
  });
});
