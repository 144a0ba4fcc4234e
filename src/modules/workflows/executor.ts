/**
 * The durable executor of the graph language (contract W2, W3). Runs live in
 * `workflow_runs`; any number of executors (one per API process, on one
 * store) share them:
 *
 * - a claim takes the oldest queued run, or a running one whose lease ran out (its executor
 *   died), with FOR UPDATE SKIP LOCKED, and holds it under a lease (WORKFLOW_LEASE_MS) that the
 *   executor renews while a step runs; every write of the run's progress is conditional on still
 *   holding the lease, so two executors never advance one run, and a run is never lost;
 * - each attempt of a step is recorded (`workflow_step_attempts`) before the step runs; an attempt
 *   whose executor died is closed as `lost` by the executor that takes the run over and runs the
 *   step again (at least once);
 * - between steps the executor honours a cancel request and the run's deadline; a housekeeping
 *   pass times runs out past their deadline (even mid-step) and releases runs gated on the
 *   organization's quotas in start order;
 * - a queued run of an archived organization is not claimed: the housekeeping pass gates it
 *   `org_archived`, and queues it again once the organization is not archived (contract W8).
 */
import { newId } from '../../model/ids.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Sql } from '../../store/sql.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Step } from './graph.js';
import type { Budget, RunRow } from './model.js';
import { finishRun } from './service.js';
import { mustTransition, sourcesOf, TERMINAL_STATUSES, type RunStatus } from './state.js';
import { createWorkflowsRepo } from './repository.js';
import { WAKE_CHANNEL } from './wake.js';
import type { FamilyMetrics } from '../platform-deps.js';
import { createNap } from './nap.js';
import { fillSlots } from './slots.js';
import { executionStatements, handBackRuns } from './sql/execution.js';
import { lockOrgAdmissions, lockRunStatus } from './sql/runs.js';

export interface ExecutorOptions {
  store: KernelStore;
  logger: Logger;
  /** How long a claim holds a run without renewal. */
  leaseMs: number;
  /** How often an idle executor looks for work (it is also woken by starts in its process). */
  pollMs: number;
  /** Runs executed at a time. */
  slots: number;
  /** Told after a run this executor ended has committed (its end notifications are due: notifier.ts). */
  onRunEnded?: () => void;
  /** Step attempts and failures, claim latency (/metrics). */
  metrics?: FamilyMetrics;
}

/** The executor stopped (or, in a test, was made to die): it writes nothing more. */
class Halted extends Error {}

type Outcome = { kind: 'ok'; output?: unknown } | { kind: 'failed'; code: string; message: string } | { kind: 'lost' } | { kind: 'deadline' };

/** Step kinds that take no time: each is recorded and done in one statement (runInstantStep). */
const INSTANT = new Set<Step['kind']>(['noop', 'output', 'costly']);

/** The budget's spending once `step` is done: a step more, and a `costly` step's credits. */
const spentAfter = (budget: Budget, step: Step): Budget['spent'] =>
  ({ credits: budget.spent.credits + (step.kind === 'costly' ? step.credits ?? 0 : 0), steps: budget.spent.steps + 1 });

export function createExecutor(o: ExecutorOptions) {
  const id = `exe_${newId()}`;
  const repo = createWorkflowsRepo(o.store.sql);
  let stopped = false;
  let dead = false;
  const nap = createNap();
  let lastHousekeeping = 0;
  let releaseDue = false;
  /** Whether the last release pass found runs gated on a cap. */
  let gatedSeen = false;
  const inflight = new Set<Promise<void>>();
  let loopDone: Promise<void> | undefined;
  let signalStop!: () => void;
  const stopping = new Promise<void>((res) => (signalStop = res));
  let unlisten: Promise<(() => Promise<void>) | undefined> = Promise.resolve(undefined);
  let started: Promise<void> | undefined;

  /** Every statement of this executor: none once it is stopped or dead. */
  const sql: Sql = new Proxy(o.store.sql, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'query' || prop === 'transaction') {
        return (...args: unknown[]) => {
          if (dead) return Promise.reject(new Halted());
          return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      }
      return v;
    },
  });

  const statements = executionStatements(sql, id, o.leaseMs);

  /**
   * Claims the next run. A run taken from `queued` reports how long it waited there (since its last
   * write, which put it in `queued`) to the claim latency histogram; one taken over from a dead
   * executor does not.
   */
  async function claim(): Promise<RunRow | undefined> {
    const r = await statements.claimNextRun(sourcesOf({ type: 'claim' }));
    if (r === undefined) return undefined;
    const { claimed_from: from, waited_seconds: waited, ...run } = r;
    if (from === 'queued') o.metrics?.workflowRunClaimed(Number(waited));
    return run;
  }

  /**
   * Opens the next attempt of step `idx` in one statement, if this executor still holds the run
   * and it is neither cancelled nor past its deadline: an attempt a dead executor left open is
   * closed as lost, the step's attempt counter moves on and the attempt is recorded, all before the
   * step runs. `undefined`: the run is not to go on here (`stop` says why).
   */
  async function beginAttempt(runId: string, idx: number): Promise<{ attempt: number; retryBudget: number | null } | undefined> {
    const s = await statements.beginAttempt(runId, idx);
    return s ? { attempt: s.attempt, retryBudget: s.retry_budget } : undefined;
  }

  /** Why a run this executor claimed is not to go on: ended here on a cancel or the deadline, else left alone. */
  async function stop(run: RunRow): Promise<void> {
    const now = await statements.runStanding(run.id);
    if (!now || now.lease_owner !== id || now.status !== 'running') return;
    if (now.cancel !== null) return void (await finish(run, 'cancel'));
    if (now.deadline_at !== null && now.deadline_at.getTime() <= Date.now()) await finish(run, 'deadline');
  }

  /** Renews the lease; false when the run is no longer this executor's running run. */
  async function renew(runId: string): Promise<{ held: boolean; deadlineAt: Date | null }> {
    const r = await statements.renewLease(runId);
    return r ? { held: true, deadlineAt: r.deadline_at } : { held: false, deadlineAt: null };
  }

  async function perform(run: RunRow, step: Step, attempt: number): Promise<Outcome> {
    switch (step.kind) {
      case 'noop':
      case 'costly':
        return { kind: 'ok' };
      case 'output':
        return { kind: 'ok', output: step.value };
      case 'fail':
        if (step.times === undefined || attempt <= step.times) return { kind: 'failed', code: step.code ?? 'STEP_FAILED', message: step.message ?? `step ${step.id} failed` };
        return { kind: 'ok' };
      case 'sleep': {
        const until = Date.now() + (step.ms ?? 0);
        for (;;) {
          const left = until - Date.now();
          if (left <= 0) return { kind: 'ok' };
          let t: NodeJS.Timeout | undefined;
          await Promise.race([new Promise((res) => (t = setTimeout(res, Math.min(left, Math.max(10, o.leaseMs / 3))))), stopping]);
          clearTimeout(t);
          if (stopped) throw new Halted();
          const r = await renew(run.id);
          if (!r.held) return { kind: 'lost' };
          if (r.deadlineAt !== null && r.deadlineAt.getTime() <= Date.now()) return { kind: 'deadline' };
        }
      }
    }
  }

  /**
   * Runs an instantaneous step (`INSTANT`) in one statement, if this executor still holds the run
   * and it is neither cancelled nor past its deadline: an attempt a dead executor left open is
   * closed as lost, and the step's next attempt is recorded as started and completed, with the run
   * moved past it. False: the run is not to go on here.
   */
  async function runInstantStep(run: RunRow, idx: number, budget: Budget, output: unknown, hasOutput: boolean): Promise<boolean> {
    const kept = hasOutput ? JSON.stringify(output ?? null) : null;
    return statements.runInstantStep(run.id, { idx, budget, hasOutput, kept });
  }

  /** Records a completed step and moves the run past it in one statement, if this executor still holds it. */
  async function completeStep(run: RunRow, idx: number, attempt: number, budget: Budget, output: unknown, hasOutput: boolean): Promise<boolean> {
    const kept = hasOutput ? JSON.stringify(output ?? null) : null;
    return statements.completeStep(run.id, { idx, budget, hasOutput, kept }, attempt);
  }

  async function failAttempt(run: RunRow, idx: number, attempt: number, error: { code: string; message: string }, park: boolean, stepId: string): Promise<boolean> {
    return sql.transaction(async (tx) => {
      const held = await statements.lockHeldRun(tx, run.id);
      if (!held) return false;
      await statements.recordFailedAttempt(tx, run.id, idx, attempt, error, park);
      if (park) {
        const next = mustTransition(held.status, { type: 'park_exception', at: Date.now(), stepId, attempt, code: error.code });
        await statements.parkRun(tx, run.id, next.status, next.gate);
      }
      return true;
    });
  }

  /** Parks the run on its budget at a step boundary; false when it is not to go on here (a cancel or the deadline comes first). */
  async function parkOnBudget(run: RunRow, step: Step, budget: Budget): Promise<boolean> {
    const next = mustTransition('running', { type: 'park_budget', at: Date.now(), stepId: step.id, spent: budget.spent.credits, cap: budget.maxCredits! });
    return statements.parkOnBudget(run.id, next.status, next.gate);
  }

  /** Ends the run this executor holds; false when it no longer holds it. */
  async function finish(run: RunRow, event: 'complete' | 'cancel' | 'deadline'): Promise<boolean> {
    const next = mustTransition('running', { type: event });
    const held = { id: run.id, status: 'running' as const };
    const ended = next.status === 'completed'
      ? await finishRun(sql, held, next.status, { leaseOwner: id })
      : await sql.transaction((tx) => finishRun(tx, held, next.status, { leaseOwner: id }));
    if (ended) o.onRunEnded?.();
    return ended;
  }

  async function execute(run: RunRow): Promise<void> {
    const steps = run.graph.steps;
    const budget: Budget = run.budget;
    let failures = 0;
    let idx = run.next_step;
    while (idx < steps.length) {
      if (stopped) return;
      const step = steps[idx]!;
      if (step.kind === 'costly' && budget.maxCredits !== undefined && budget.spent.credits + (step.credits ?? 0) > budget.maxCredits) {
        if (!(await parkOnBudget(run, step, budget))) await stop(run);
        return;
      }
      if (INSTANT.has(step.kind)) {
        // Nothing to wait for: the attempt is recorded and completed in one statement, which is
        // the step's whole execution (a crash before its commit leaves the step to run again).
        const spent = spentAfter(budget, step);
        if (!(await runInstantStep(run, idx, { ...budget, spent }, step.kind === 'output' ? step.value : undefined, step.kind === 'output'))) return stop(run);
        o.metrics?.workflowStepAttempt(step.kind);
        budget.spent = spent;
        failures = 0;
        idx += 1;
        continue;
      }
      const begun = await beginAttempt(run.id, idx);
      if (begun === undefined) return stop(run);
      o.metrics?.workflowStepAttempt(step.kind);
      const attempt = begun.attempt;
      const outcome = await perform(run, step, attempt);
      if (outcome.kind === 'lost') return;
      if (outcome.kind === 'deadline') return void (await finish(run, 'deadline'));
      if (outcome.kind === 'failed') {
        failures += 1;
        const park = failures > (begun.retryBudget ?? step.retries ?? 0);
        const recorded = await failAttempt(run, idx, attempt, { code: outcome.code, message: outcome.message }, park, step.id);
        if (recorded) o.metrics?.workflowStepFailed(step.kind);
        if (!recorded || park) return;
        continue;
      }
      budget.spent = spentAfter(budget, step);
      if (!(await completeStep(run, idx, attempt, budget, outcome.output, step.kind === 'output'))) return;
      failures = 0;
      idx += 1;
    }
    await finish(run, 'complete');
  }

  /** Times runs out past their deadline (the partial index workflow_runs_deadline finds them). */
  async function timeOut(): Promise<void> {
    const late = await statements.lateRuns();
    for (const r of late) {
      const next = mustTransition(r.status, { type: 'deadline' });
      const ended = await sql.transaction(async (tx) => {
        const locked = await lockRunStatus(tx, r.id);
        return locked !== undefined && !TERMINAL_STATUSES.includes(locked) && (await finishRun(tx, { id: r.id, status: locked }, next.status));
      });
      if (ended) o.onRunEnded?.();
    }
  }

  /**
   * Releases runs gated on their organization's quotas, oldest first, as far as slots are free and
   * while the organization holds fewer suspended runs than its cap; none of an archived organization.
   */
  async function release(): Promise<boolean> {
    const orgs = await statements.orgsGatedOnQuota();
    gatedSeen = orgs.length > 0;
    let released = 0;
    for (const orgId of orgs) {
      const policy = await repo.policy(orgId);
      released += await sql.transaction(async (tx) => {
        await lockOrgAdmissions(tx, orgId);
        const { active, suspended } = await statements.activeAndSuspended(tx, orgId);
        const free = suspended >= policy.maxSuspendedRuns ? 0 : policy.maxConcurrentRuns - active;
        if (free <= 0) return 0;
        const next = mustTransition('gated', { type: 'release' });
        return statements.releaseGated(tx, orgId, free, next.status);
      });
    }
    return released > 0;
  }

  /**
   * Gates the queued runs of archived organizations (`org_archived`), and queues again the runs so
   * gated whose organization is no longer archived (contract W8).
   */
  async function gateArchived(): Promise<void> {
    const gated = mustTransition('queued', { type: 'archive', at: Date.now() });
    await statements.gateArchivedOrgsRuns(sourcesOf({ type: 'archive', at: 0 }), gated.status, gated.gate);
    const queued = mustTransition('gated', { type: 'unarchive' });
    await statements.ungateUnarchivedOrgsRuns(sourcesOf({ type: 'unarchive' }), queued.status);
  }

  function wake(): void {
    nap.wake();
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        if (Date.now() - lastHousekeeping >= Math.min(o.pollMs, 250)) {
          lastHousekeeping = Date.now();
          releaseDue = false;
          await timeOut();
          await gateArchived();
          await release();
        } else if (releaseDue) {
          releaseDue = false;
          await release();
        }
        await fillSlots({
          inflight, slots: o.slots, stopped: () => stopped, claim, run: execute,
          failed(run, e) {
            if (!(e instanceof Halted)) o.logger.error({ event: 'workflows.executor.error', runId: run.id, err: { message: (e as Error).message } }, 'workflow step execution failed');
          },
          settled() {
            // A run that ended may free a slot of its organization's cap (when runs wait on one:
            // otherwise the next housekeeping pass finds runs gated since).
            if (gatedSeen) releaseDue = true;
            wake();
          },
        });
      } catch (e) {
        if (e instanceof Halted) return;
        o.logger.error({ event: 'workflows.executor.error', err: { message: (e as Error).message } }, 'workflow executor pass failed');
      }
      if (stopped) break;
      await nap.sleep(o.pollMs);
    }
  }

  return {
    id,
    /**
     * Listens for runs queued by other processes, then starts the loop (so that nothing queued
     * between its first pass and the listening is left to the poll); resolves once running.
     */
    start(): Promise<void> {
      started ??= (async () => {
        // Without the wake-up the poll still finds the work, only later; a listener that fails to
        // open is logged, not fatal.
        unlisten = o.store.sql.listen(WAKE_CHANNEL, wake).catch((e: unknown) => {
          o.logger.warn({ event: 'workflows.executor.listen_failed', err: { message: (e as Error).message } }, 'workflow executor polls only: listening failed');
          return undefined;
        });
        await unlisten;
        if (stopped) return;
        loopDone = loop();
        o.logger.info({ event: 'workflows.executor.started', executorId: id, slots: o.slots, leaseMs: o.leaseMs }, 'workflow executor started');
      })();
      return started;
    },
    wake,
    /**
     * Stops: claims no more, interrupts sleeping steps, and hands the runs it holds back (their
     * leases end now, so another executor takes them over at once and runs the open step again).
     */
    async stop(): Promise<void> {
      stopped = true;
      signalStop();
      await started;
      wake();
      await loopDone;
      await Promise.allSettled([...inflight]);
      await unlisten.then((f) => f?.()).catch(() => {});
      if (!dead) {
        await handBackRuns(o.store.sql, id);
      }
    },
    /** Dies on the spot, as a killed process would: no statement more, leases left to run out. */
    async die(): Promise<void> {
      dead = true;
      stopped = true;
      signalStop();
      await started;
      await unlisten.then((f) => f?.()).catch(() => {});
      wake();
      await loopDone?.catch(() => {});
      await Promise.allSettled([...inflight]);
    },
  };
}

export type Executor = ReturnType<typeof createExecutor>;
