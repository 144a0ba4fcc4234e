/**
 * Clients that poll a port every few milliseconds, as readiness probes and load balancers do,
 * from before anything listens on it until told to stop. Each target keeps the run of answers it
 * got, in order, folded into classes: `200`, `503 {"status":"starting"}` (status and body, for
 * other answers), or the error's code (ECONNREFUSED, ECONNRESET...).
 */
import http from 'node:http';
import { createServer } from 'node:net';

export interface PollTarget {
  path: string;
  headers?: Record<string, string>;
  /** One kept-alive connection (as a load balancer) rather than a new connection each time (as a kubelet). */
  keepAlive: boolean;
}

export interface AnswerRun {
  answer: string;
  count: number;
  /** Whether the run's answers came after `mark()`. */
  afterMark: boolean;
}

export interface Poller {
  /** Per target, its answers in order, consecutive equal ones (on the same side of the mark) folded. */
  runs: AnswerRun[][];
  /** From now on answers come "after the mark" (e.g. once a signal was sent). */
  mark(): void;
  /** Whether every target has been answered `answer` at least `times` times. */
  allSaw(answer: string, times?: number): boolean;
  stop(): Promise<void>;
}

/** A port free now (bound and released): the process under test is told to listen on it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** No answer in this long is a failure of its own (a `timeout` answer), not a hang of the test. */
const REQUEST_TIMEOUT_MS = 15_000;

export function startPolling(port: number, targets: readonly PollTarget[], intervalMs = 3): Poller {
  let stopped = false;
  let marked = false;
  const runs: AnswerRun[][] = targets.map(() => []);
  const loops = targets.map(async (target, i) => {
    const agent = target.keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : false;
    try {
      while (!stopped) {
        const answer = await ask(port, target, agent);
        // When it came, not when it was asked: one asked just before the mark may be answered after.
        const afterMark = marked;
        const list = runs[i]!;
        const last = list[list.length - 1];
        if (last && last.answer === answer && last.afterMark === afterMark) last.count++;
        else list.push({ answer, count: 1, afterMark });
        await new Promise((r) => setTimeout(r, intervalMs));
      }
    } finally {
      if (agent) agent.destroy();
    }
  });
  return {
    runs,
    mark: () => void (marked = true),
    allSaw: (answer, times = 1) => runs.every((list) => list.filter((r) => r.answer === answer).reduce((n, r) => n + r.count, 0) >= times),
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

function ask(port: number, target: PollTarget, agent: http.Agent | false): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: target.path, headers: target.headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(res.statusCode === 200 ? '200' : `${res.statusCode} ${body.slice(0, 200)}`));
      res.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/** The runs as one line each, for an assertion's message. */
export function describeRuns(targets: readonly PollTarget[], runs: readonly AnswerRun[][]): string {
  return targets
    .map((t, i) => `${t.path}${t.keepAlive ? ' (kept alive)' : ''}: ${runs[i]!.map((r) => `${r.afterMark ? '| ' : ''}${r.answer} x${r.count}`).join(', ')}`)
    .join('\n');
}
