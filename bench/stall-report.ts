/**
 * What the stalls of a measured process were made of: `node --import tsx bench/stall-report.ts
 * <stalls.json> <profile.cpuprofile> [seconds]`, the files of bench/stall-monitor.mjs and `--cpu-prof` from
 * the same process. For every turn the monitor saw held past its threshold, the CPU samples taken
 * inside it are counted by the function on top of the stack and by the nearest frame of logdrain's
 * own code (dist/), then summed over all stalls (of the profile's last `seconds` only, when given: the
 * loaded phase, without the start's module loading and compiling): what holds the loop, and how much of a stall was
 * the process running at all (samples x interval against the stall's length).
 */
import { readFileSync } from 'node:fs';

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }
interface Stalls { stalls: { startUs: number; endUs: number; ms: number }[]; gcs: { startUs: number; ms: number; kind?: number }[]; delay: Record<string, number> }

const [stallsFile, profileFile, lastSeconds] = process.argv.slice(2);
if (!stallsFile || !profileFile) throw new Error('usage: stall-report.ts <stalls.json> <profile.cpuprofile>');
const report = JSON.parse(readFileSync(stallsFile, 'utf8')) as Stalls;
const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as Profile;

if (lastSeconds) report.stalls = report.stalls.filter((s) => s.startUs >= profile.endTime - Number(lastSeconds) * 1e6);
if (lastSeconds) report.gcs = report.gcs.filter((g) => g.startUs >= profile.endTime - Number(lastSeconds) * 1e6);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const short = (f: CallFrame): string => {
  const file = f.url.replace(/^.*\/(node_modules\/)/, '$1').replace(/^.*\/dist\//, 'dist/').replace(/^file:\/\//, '');
  return `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
};
/** The nearest frame of logdrain's own code, or the leaf's own name when none (GC, idle, program). */
function ownFrame(id: number): string {
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const f = byId.get(at)!.callFrame;
    if (f.url.includes('/dist/') && !f.url.includes('node_modules')) return short(f);
  }
  return short(byId.get(id)!.callFrame);
}

const times: number[] = [];
let t = profile.startTime;
for (const d of profile.timeDeltas) times.push((t += d));
const interval = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length);

const GC_KINDS: Record<number, string> = { 1: 'scavenge', 4: 'mark-compact', 8: 'incremental marking', 16: 'weak callbacks' };
/** The collections over 1 ms that began inside a stall, by kind: `scavenge 12.1`. */
const gcsOf = (s: { startUs: number; endUs: number }): string =>
  report.gcs.filter((g) => g.startUs >= s.startUs && g.startUs <= s.endUs).map((g) => `${GC_KINDS[g.kind ?? 0] ?? `kind ${g.kind}`} ${g.ms}`).join(', ');

const leafTotals = new Map<string, number>();
const ownTotals = new Map<string, number>();
const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
let stallMs = 0;
let sampled = 0;
/** Each stall's sampled running time (ms): the process's own work in it, whatever the machine added. */
const running: number[] = [];
const lines: string[] = [];
for (const s of report.stalls) {
  const leaf = new Map<string, number>();
  let n = 0;
  for (let i = 0; i < times.length; i++) {
    if (times[i]! < s.startUs || times[i]! > s.endUs) continue;
    const id = profile.samples[i]!;
    const name = short(byId.get(id)!.callFrame);
    if (name.startsWith('(idle)')) continue;
    n++;
    add(leaf, name);
    add(leafTotals, name);
    add(ownTotals, ownFrame(id));
  }
  stallMs += s.ms;
  sampled += n;
  running.push((n * interval) / 1000);
  const top = [...leaf].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, v]) => `${v} ${k}`).join('; ');
  const gc = gcsOf(s);
  lines.push(`${s.ms.toFixed(0).padStart(5)} ms, ${String(n).padStart(4)} samples: ${top}${gc ? ` | gc: ${gc}` : ''}`);
}
const gcIn = report.gcs.filter((g) => report.stalls.some((s) => g.startUs >= s.startUs && g.startUs <= s.endUs));
console.log(`loop delay (monitorEventLoopDelay, ms): ${JSON.stringify(report.delay)}`);
console.log(`${report.stalls.length} stalls, ${stallMs.toFixed(0)} ms in all, ${(sampled * interval / 1000).toFixed(0)} ms of it sampled running (interval ${interval.toFixed(0)} µs)`);
console.log(`gc pauses over 1 ms: ${report.gcs.length} (${report.gcs.reduce((a, g) => a + g.ms, 0).toFixed(0)} ms), ${gcIn.length} inside stalls; longest ${Math.max(0, ...report.gcs.map((g) => g.ms))} ms`);
for (const [kind, name] of Object.entries(GC_KINDS)) {
  const of = report.gcs.filter((g) => g.kind === Number(kind));
  const inside = gcIn.filter((g) => g.kind === Number(kind));
  if (of.length > 0) console.log(`  ${name}: ${of.length} (${of.reduce((a, g) => a + g.ms, 0).toFixed(0)} ms, longest ${Math.max(...of.map((g) => g.ms))}), ${inside.length} inside stalls (${inside.reduce((a, g) => a + g.ms, 0).toFixed(0)} ms)`);
}
const ran = [...running].sort((a, b) => b - a);
console.log(`stalls with over 20 ms of samples running: ${ran.filter((r) => r > 20).length}; the most running in one: ${(ran[0] ?? 0).toFixed(0)} ms; over 50 ms: ${ran.filter((r) => r > 50).length}`);
const longest = [...report.stalls].sort((a, b) => b.ms - a.ms).slice(0, 10).map((s) => s.ms);
console.log(`longest stalls (ms): ${longest.join(', ')}`);
const table = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${String(v).padStart(6)}  ${(100 * v / Math.max(1, sampled)).toFixed(1).padStart(5)}%  ${k}`);
};
table('samples inside stalls, by the function on top of the stack', leafTotals);
table("samples inside stalls, by the nearest frame of logdrain's code", ownTotals);
console.log('\nstalls, in order:');
for (const l of lines) console.log(l);
