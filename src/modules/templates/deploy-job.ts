/**
 * The deploy job: deploys are durable work on the store (deploy-migrations.ts). Every API process
 * runs one; the request that mints a deploy wakes its own process's job, and an idle job looks for
 * work every TEMPLATE_DEPLOY_POLL_MS (deploys minted by other processes, and those a dead process
 * left: a claim is a lease, TEMPLATE_DEPLOY_LEASE_MS, renewed while the job works on it, so a
 * deploy whose process died is taken over once its lease runs out).
 *
 * A claimed deploy in `running` installs the template on its minted agent (the install port; a
 * re-install of the same version on the same agent is harmless, so an install that ran before a
 * crash and runs again installs once). A refused install moves it to `rollback_pending`, and the
 * minted agent is removed (`rolled_back`): a refused deploy leaves no agent. Any other failure
 * leaves the lease to run out, and the deploy is tried again, up to MAX_ATTEMPTS claims; then it
 * is `failed`.
 *
 * Test hook TEMPLATE_DEPLOY_HOLD (docs/api-templates.md): the job holds each deploy it claims
 * before installing, renewing its lease, until the process stops, and logs
 * `templates.deploy.held`; a process without it takes the deploy over after the lease.
 */
import { EventEmitter } from 'node:events';
import { newId } from '../../model/ids.js';
import { AppError } from '../../errors.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Sql } from '../../store/sql.js';
import { createDeployRepo, type DeployRow } from './deploy-repository.js';

/** The job no longer holds the deploy it was installing (its lease ran out and another took it): its install is undone. */
export class LeaseLost extends Error {}

/** Claims of one deploy before an unexplained failure ends it `failed`. */
export const MAX_ATTEMPTS = 5;

export interface DeployJobRequest {
  deployId: string;
  orgId: string;
  agentId: string;
  templateId: string;
  version: number;
  /** The user the deploy acts for (install results' `installedBy`, `appliedBy`). */
  requestedBy: string;
  /** The install body (spec 03 part 4.4) as the deploy was sent. */
  body: Record<string, unknown>;
}

/**
 * Moves the deploy to `succeeded` with its result on `tx` (the install's unit of work), if this job
 * still holds it; false otherwise, and the install must then be undone (throw).
 */
export type SettleDeploy = (tx: Sql, result: Record<string, unknown>) => Promise<boolean>;

export interface DeploySteps {
  /**
   * Installs the template on the minted agent and settles the deploy in the same unit of work (an
   * install and the deploy's success commit together); the deploy result. Throws an AppError when
   * the install is refused, `LeaseLost` when `settle` found the deploy no longer this job's.
   */
  install(r: DeployJobRequest, settle: SettleDeploy): Promise<Record<string, unknown>>;
  /** Removes the minted agent of a refused deploy (nothing when it is gone already). */
  removeAgent(r: DeployJobRequest): Promise<void>;
}

export interface DeployJobOptions {
  store: KernelStore;
  logger: Logger;
  steps: DeploySteps;
  leaseMs: number;
  pollMs: number;
  slots: number;
  answerWaitMs: number;
  hold: boolean;
}

export interface DeployJob {
  start(): void;
  /** A deploy was minted: look for it now. */
  wake(): void;
  stop(): Promise<void>;
  /** Emits `ended` with a deploy id when a deploy this process worked on ended. */
  readonly events: EventEmitter;
}

/** A deploy's job request from its row. */
export const jobRequestOf = (r: DeployRow): DeployJobRequest => ({
  deployId: r.id, orgId: r.org_id, agentId: r.agent_id, templateId: r.template_id, version: r.version, requestedBy: r.requested_by, body: r.request,
});

/** An install refusal as the poll route's `error` and the status the deploy's requests answer it with. */
export const refusalOf = (e: AppError): { status: number; body: Record<string, unknown> } => {
  const { message: _rules, ...fields } = e.details;
  return { status: e.statusCode, body: { code: e.code, message: e.message, ...fields } };
};

export function createDeployJob(o: DeployJobOptions): DeployJob {
  const owner = `dpl_${newId()}`;
  const repo = createDeployRepo(o.store.sql);
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const inflight = new Set<Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let filling: Promise<void> | undefined;
  let again = false;
  let stopHold!: () => void;
  const stopping = new Promise<void>((res) => (stopHold = res));

  /** Renews the lease every third of it while `work` runs. */
  async function leased<T>(id: string, work: () => Promise<T>): Promise<T> {
    const t = setInterval(() => void repo.renew(id, owner, o.leaseMs).catch(() => {}), Math.max(10, Math.floor(o.leaseMs / 3)));
    try {
      return await work();
    } finally {
      clearInterval(t);
    }
  }

  async function rollback(row: DeployRow): Promise<void> {
    await leased(row.id, () => o.steps.removeAgent(jobRequestOf(row)));
    await repo.move(row.id, owner, 'rollback_pending', { type: 'removed' }, { answerWaitMs: o.answerWaitMs });
  }

  async function work(row: DeployRow): Promise<void> {
    if (row.status === 'rollback_pending') return rollback(row);
    if (o.hold) {
      o.logger.info({ event: 'templates.deploy.held', deployId: row.id, agentId: row.agent_id }, 'deploy held before its install (TEMPLATE_DEPLOY_HOLD)');
      await leased(row.id, () => stopping);
      await repo.release(row.id, owner);
      return;
    }
    const settle: SettleDeploy = (tx, result) => createDeployRepo(tx).move(row.id, owner, 'running', { type: 'installed' }, { result, answerWaitMs: o.answerWaitMs });
    try {
      await leased(row.id, () => o.steps.install(jobRequestOf(row), settle));
      o.logger.info({ event: 'templates.deploy.succeeded', deployId: row.id, agentId: row.agent_id }, 'deploy succeeded');
    } catch (e) {
      if (e instanceof LeaseLost) return;
      if (!(e instanceof AppError) || e.statusCode >= 500) throw e;
      const error = refusalOf(e);
      if (await repo.move(row.id, owner, 'running', { type: 'refused' }, { error, answerWaitMs: o.answerWaitMs })) {
        o.logger.info({ event: 'templates.deploy.refused', deployId: row.id, code: e.code }, 'deploy refused by the install; removing the minted agent');
        await rollback({ ...row, status: 'rollback_pending' });
      }
    }
  }

  async function failed(row: DeployRow, e: unknown): Promise<void> {
    o.logger.warn({ event: 'templates.deploy.attempt_failed', deployId: row.id, attempt: row.attempts, err: e instanceof Error ? e.message : String(e) }, 'deploy attempt failed');
    if (stopped || row.attempts < MAX_ATTEMPTS) return;
    const error = { status: 500, body: { code: 'DEPLOY_FAILED', message: `The deploy failed ${row.attempts} times; the minted agent ${row.agent_id} is left as it is` } };
    await repo.move(row.id, owner, row.status, { type: 'fail' }, { error, answerWaitMs: o.answerWaitMs }).catch(() => {});
  }

  async function fill(): Promise<void> {
    do {
      again = false;
      while (!stopped && inflight.size < o.slots) {
        const row = await repo.claim(owner, o.leaseMs);
        if (!row) break;
        const p: Promise<void> = work(row)
          .catch((e: unknown) => failed(row, e))
          .finally(() => {
            inflight.delete(p);
            events.emit('ended', row.id);
            wake();
          });
        inflight.add(p);
      }
    } while (again && !stopped);
  }

  function wake(): void {
    if (stopped) return;
    if (filling) {
      again = true;
      return;
    }
    filling = fill()
      .catch((e: unknown) => o.logger.warn({ event: 'templates.deploy.claim_failed', err: e instanceof Error ? e.message : String(e) }, 'deploy claim failed'))
      .finally(() => (filling = undefined));
  }

  return {
    events,
    start() {
      const tick = () => {
        wake();
        timer = setTimeout(tick, o.pollMs);
        timer.unref();
      };
      tick();
    },
    wake,
    async stop() {
      stopped = true;
      stopHold();
      if (timer) clearTimeout(timer);
      await filling;
      await Promise.allSettled([...inflight]);
    },
  };
}
