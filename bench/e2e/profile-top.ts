/**
 * Top self-time functions of a V8 CPU profile (`--cpu-prof`, written by the harness with
 * BENCH_CPU_PROF=<dir>): `node --import tsx bench/e2e/profile-top.ts <file.cpuprofile> [n]`.
 * Prints JSON: total sampled milliseconds, the n functions with the most self time (name,
 * file:line, ms, share), idle and GC listed as V8 names them, and self time by area: each sample
 * goes to the innermost frame of its stack that is logdrain's (`src/<stage>`) or a package's
 * (`pkg:<name>`), else `node` (Node's own code reached from neither), so a stage's share
 * includes the Node and V8 built-ins it calls.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export function topSelfTime(path: string, n = 25) {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i + 1] ?? 0));
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    const where = f.url ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|dist|src)\//, '$1/').replace(/^file:\/\/.*?\/bench-[a-z0-9-]+\//, 'dist/')}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    total += us;
  }
  const parent = new Map<number, number>();
  for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const areaOf = (id: number): string => {
    const top = byId.get(id)!.callFrame.functionName;
    if (top === '(idle)' || top === '(garbage collector)' || top === '(program)') return top;
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const url = byId.get(cur)!.callFrame.url;
      const own = /\/(?:dist|src|bench-[a-z0-9-]+)\/([a-z-]+)(?:\/|\.js|\.ts)/.exec(url);
      if (own && !url.includes('node_modules')) return `src/${own[1]}`;
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
      if (pkg) return `pkg:${pkg[1]}`;
    }
    return 'node';
  };
  const byArea = new Map<string, number>();
  for (const [id, us] of selfUs) byArea.set(areaOf(id), (byArea.get(areaOf(id)) ?? 0) + us);
  const busy = total - (byFunction.get('(idle)') ?? 0);
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([fn, us]) => ({ fn, ms: Math.round(us / 1000), shareOfBusy: fn === '(idle)' ? null : Number((us / busy).toFixed(4)) }));
  const areas = [...byArea].filter(([a]) => a !== '(idle)').sort((a, b) => b[1] - a[1])
    .map(([area, us]) => ({ area, ms: Math.round(us / 1000), shareOfBusy: Number((us / busy).toFixed(4)) }));
  return { sampledMs: Math.round(total / 1000), busyMs: Math.round(busy / 1000), areas, top };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: profile-top.ts <file.cpuprofile> [n]');
  console.log(JSON.stringify(topSelfTime(file, Number(process.argv[3] ?? 25)), null, 2));
}
