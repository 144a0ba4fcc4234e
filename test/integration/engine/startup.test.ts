/**
 * Start and stop under probes: `start` and `serve` spawned as real processes while clients poll
 * `/healthz` and a drain route every few milliseconds from the moment of spawn (each on a kept-alive
 * connection, as a load balancer, and on a new connection each time, as a kubelet). The
 * process never exits on its own; each client sees a refused connection until the port is bound,
 * then `503 {"status":"starting"}` until the API is ready, then `200`; after SIGTERM, still `200`
 * or a `503`, a reset or a refused connection once closed, and the process exits 0. A SIGTERM
 * while starting is the same, without the `200`.
 *
 * Both modes (vitest.config.ts): PGlite in memory, or Postgres and the librdkafka mock broker,
 * where the API is built only after the consumer has joined its group and a worker alone serves
 * its METRICS_PORT listener (polled the same way).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_MODE, waitFor } from '../../helpers/app.js';
import type { LogdrainProcess } from '../../helpers/processes.js';
import { processModes } from '../../helpers/process-modes.js';
import { describeRuns, freePort, startPolling, type AnswerRun, type PollTarget, type Poller } from '../../helpers/poller.js';

const STARTING = '503 {"status":"starting"}';
const DRAINS = { path: '/admin/orgs/org_acme/log-drains', headers: { authorization: 'Bearer lk_acme_manage' } };
const API_TARGETS: PollTarget[] = [
  { path: '/healthz', keepAlive: true },
  { path: '/healthz', keepAlive: false },
  { ...DRAINS, keepAlive: false },
  { ...DRAINS, keepAlive: true },
];
const WORKER_TARGETS: PollTarget[] = [
  { path: '/healthz', keepAlive: true },
  { path: '/readyz', keepAlive: false },
  { path: '/metrics', keepAlive: true },
];

/** A connection closed under a request (by a closing listener). */
const CUT = new Set(['ECONNRESET', 'EPIPE']);

/** The phases a client may go through, in this order; the last two only once SIGTERM was sent. */
const PHASES = ['unbound', 'starting', 'serving', 'stopping', 'closed'] as const;
type Phase = (typeof PHASES)[number];

/** The API's answers: the interim 503 while starting, then the API's own. */
function apiPhase(answer: string, answeredBefore: boolean): Phase | undefined {
  if (answer === 'ECONNREFUSED') return answeredBefore ? 'closed' : 'unbound';
  if (answer === STARTING) return 'starting';
  if (answer === '200') return 'serving';
  if (answer.startsWith('503 ') || CUT.has(answer)) return 'stopping';
  return undefined;
}

/** A worker's listener: open from the start, `/readyz` 503 until the consumer has joined. */
function workerPhase(answer: string, answeredBefore: boolean): Phase | undefined {
  if (answer === 'ECONNREFUSED') return answeredBefore ? 'closed' : 'unbound';
  if (answer === '200' || answer.startsWith('503 {"status":"not_ready"')) return 'serving';
  if (CUT.has(answer)) return 'stopping';
  return undefined;
}

/** Every client's answers came in the phases' order, and none of stopping before the signal. */
function expectOrderly(targets: PollTarget[], runs: AnswerRun[][], phaseOf: typeof apiPhase): void {
  const story = describeRuns(targets, runs);
  for (const list of runs) {
    let reached = 0;
    let answered = false;
    for (const run of list) {
      const phase = phaseOf(run.answer, answered);
      expect(phase, `an answer out of any phase: ${run.answer}\n${story}`).toBeDefined();
      const at = PHASES.indexOf(phase!);
      expect(at, `${run.answer} after an answer of a later phase\n${story}`).toBeGreaterThanOrEqual(reached);
      if (!run.afterMark) expect(at, `${run.answer} before any signal\n${story}`).toBeLessThanOrEqual(PHASES.indexOf('serving'));
      reached = at;
      if (run.answer !== 'ECONNREFUSED') answered = true;
    }
  }
}

describe(`start and stop under probes (${TEST_MODE})`, () => {
  const modes = processModes('startup');
  let poller: Poller | undefined;
  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
  });

  /** Spawns `role` with clients polling its port from that instant; `exitedEarly` tells whether it exited before being signalled. */
  async function spawnPolled(role: string, targets: PollTarget[]) {
    const port = await freePort();
    const p = modes.spawn(role, port);
    poller = startPolling(port, targets);
    let signalled = false;
    let exitedEarly = false;
    void p.exited.then(() => (exitedEarly = !signalled));
    const signal = () => {
      signalled = true;
      poller!.mark();
      p.kill('SIGTERM');
    };
    return { p, poller, signal, exitedEarly: () => exitedEarly };
  }

  /** Waits for `ok`, failing at once (with what was seen) if the process exits meanwhile. */
  async function until(what: string, ok: () => boolean, run: { p: LogdrainProcess; exitedEarly(): boolean }, targets: PollTarget[]) {
    await waitFor(() => {
      if (run.exitedEarly()) {
        throw new Error(`exited before ${what}: ${run.p.stderr.slice(-12).join('\n')}\n${describeRuns(targets, poller!.runs)}`);
      }
      return ok();
    }, { timeoutMs: 45_000, intervalMs: 20, what });
  }

  const roles = TEST_MODE === 'kafka-postgres' ? (['start', 'serve', 'worker'] as const) : (['start', 'serve'] as const);
  for (const role of roles) {
    const targets = role === 'worker' ? WORKER_TARGETS : API_TARGETS;
    const phaseOf = role === 'worker' ? workerPhase : apiPhase;

    it(`${role}: polled from spawn, answers in order, never exits, and exits 0 on SIGTERM mid-polling`, async () => {
      const run = await spawnPolled(role, targets);
      // Ready everywhere, and answering for a while: the readiness the API (or the worker's /readyz) reports.
      await until('200 on every client', () => run.poller.allSaw('200', 20), run, targets);
      run.signal();
      const { code, signal } = await run.p.exited;
      await run.poller.stop();
      expect({ code, signal }, `${run.p.stderr.join('\n')}\n${describeRuns(targets, run.poller.runs)}`).toEqual({ code: 0, signal: null });
      expect(run.p.stderr).toEqual([]);
      expectOrderly(targets, run.poller.runs, phaseOf);
    });

    if (role === 'worker') continue;
    it(`${role}: a SIGTERM while it starts stops it with exit 0, the clients answered in order`, async () => {
      const run = await spawnPolled(role, targets);
      await until('the interim answer on every client', () => run.poller.allSaw(STARTING), run, targets);
      run.signal();
      const { code, signal } = await run.p.exited;
      await run.poller.stop();
      expect({ code, signal }, `${run.p.stderr.join('\n')}\n${describeRuns(targets, run.poller.runs)}`).toEqual({ code: 0, signal: null });
      expect(run.p.stderr).toEqual([]);
      expectOrderly(targets, run.poller.runs, phaseOf);
    });
  }
});
