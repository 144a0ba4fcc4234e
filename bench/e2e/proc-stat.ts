/**
 * CPU figures of processes and threads from /proc, shared by the harness (which reads the worker
 * from outside) and the reference runners (which read themselves).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks a second of /proc's CPU times (USER_HZ, 100 on Linux). */
export const CLK_TCK = 100;

/** The fields of a /proc stat file after the command name (field 3 onward: state, ppid, ...). */
export function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds of a /proc stat file (a process's or one thread's). */
export function statCpuSeconds(path: string): number {
  const fields = statFields(path);
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Thread names (`comm`) by thread id, as last read by threadCpuSeconds (a thread keeps its name after its process has gone). */
const threadNames = new Map<number, string>();

/** CPU seconds of each thread of a live process (`self`: this one), by thread id; a thread that has exited is missing. */
export function threadCpuSeconds(pid: number | 'self'): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(Number(tid), statCpuSeconds(`/proc/${pid}/task/${tid}/stat`));
      threadNames.set(Number(tid), readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
    } catch {
      // exited between the listing and the read
    }
  }
  return out;
}

/**
 * Each thread's CPU between two readings, as `id - pid(name):seconds` (BENCH_THREADS experiments): the
 * main thread is 0, V8's platform threads come next, zlib's pool later; the name is the thread's `comm`.
 */
export function threadCpuSpent(pid: number, start: Map<number, number>, end: Map<number, number>): string {
  return [...end].map(([tid, s]) => `${tid - pid}(${threadNames.get(tid) ?? '?'}):${(s - (start.get(tid) ?? 0)).toFixed(2)}`).join(' ');
}
