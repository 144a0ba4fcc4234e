/**
 * `npm run bench:e2e` runs: a smoke run of its harness (a few hundred records, the logdrain
 * scenario only, its own broker, Postgres database and receiver) completes with every record
 * delivered once. No figure is asserted: speed is measured by the benchmark itself, not here; this
 * keeps the harness from breaking unnoticed between benchmark runs.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('the end-to-end benchmark harness', () => {
  it('runs the logdrain scenario on a small data set: every record delivered, no failure', async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'bench/e2e/run.ts'], {
        cwd: ROOT,
        // BENCH_ONLY prints the results instead of writing bench/results/e2e.json.
        env: { ...process.env, RECORDS: '300', AGENT_RECORDS: '300', BENCH_ONLY: 'logdrain', BENCH_PARTITIONS: '4' },
        timeout: 240_000,
        maxBuffer: 16 * 1024 * 1024,
      }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
    });
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const json = run.stdout.slice(run.stdout.indexOf('{'), run.stdout.indexOf('\n}\n') + 2);
    const out = JSON.parse(json) as { runs: { name: string; records: number; posts: number }[]; failures: Record<string, string> };
    expect(out.failures).toEqual({});
    expect(out.runs).toHaveLength(1);
    expect(out.runs[0]).toMatchObject({ name: 'logdrain', records: 300 });
    expect(out.runs[0]!.posts).toBeGreaterThan(0);
  }, 300_000);
});
