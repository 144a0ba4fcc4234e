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

/**
 * The CPU of the Postgres server the benchmark uses, at one moment: each of its processes' own
 * (the postmaster and every process it started) and what the postmaster has reaped of exited
 * ones (their whole lives' CPU, in its cutime/cstime). `postmaster` unknown (a server not on this
 * machine's /proc): every `postgres` process of the machine.
 */
export interface PostgresCpu {
  own: Map<number, number>;
  reaped: number;
}

export function postgresCpu(postmaster?: number): PostgresCpu {
  const own = new Map<number, number>();
  let reaped = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const f = stat.slice(close + 2).split(' ');
      // Field 4 of stat (ppid) is index 1 after the name.
      if (postmaster !== undefined && Number(pid) !== postmaster && Number(f[1]) !== postmaster) continue;
      // Fields 14-17 of stat (utime, stime, cutime, cstime): indexes 11-14 after the name.
      own.set(Number(pid), (Number(f[11]) + Number(f[12])) / CLK_TCK);
      reaped += (Number(f[13]) + Number(f[14])) / CLK_TCK;
    } catch {
      /* gone meanwhile */
    }
  }
  return { own, reaped };
}

/**
 * What the server spent between two readings, as long as nothing else uses it meanwhile (on a
 * machine whose shared server others use too, point BENCH_POSTGRES_URL at a server of the
 * benchmark's own). A backend that exits in between adds its whole life's CPU to what the
 * postmaster has reaped: the part it spent before the first reading (a migration's connection, an
 * API process's pool closing as a run starts) is not the run's, and is taken off.
 */
export function postgresCpuBetween(start: PostgresCpu, end: PostgresCpu): number {
  let spent = end.reaped - start.reaped;
  for (const [pid, cpu] of end.own) spent += cpu - (start.own.get(pid) ?? 0);
  for (const [pid, cpu] of start.own) if (!end.own.has(pid)) spent -= cpu;
  return spent;
}
