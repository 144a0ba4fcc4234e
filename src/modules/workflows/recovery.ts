/**
 * Recovery of parked runs and erasure (spec 03 parts 3, 4.3, 5; contract W6): retry and resolve a
 * step parked on an exception, raise the budget of a run parked on it, erase a terminal run. Each
 * runs in one unit of work holding the run's row; the status moves come from state.ts. The order of
 * checks is W6's: run and step existence, human-only, creator, body, the no-op answers of a park
 * already recovered, then the state's 409s.
 */
import { newId } from '../../model/ids.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Sql } from '../../store/sql.js';
import type { UnitOfWork } from '../../store/unit-of-work.js';
import { createAuditRepo } from '../../store/audit-repo.js';
import { authorizeOrgScopes, requirePerson, type Principal } from '../../api/kernel/auth.js';
import { RecoveryErrors, WorkflowErrors } from './errors.js';
import { validateValue, type Step } from './graph.js';
import type { Budget, Recovery, RunRow, StepRow } from './model.js';
import { finishRun, FIELD_MAX_BYTES, validationFailed } from './service.js';
import { isTerminal, mustTransition, type Gate } from './state.js';
import type { PolicyLimits } from './seed.js';
import { deleteRun, endParkedStep, failParkedStep, raiseRunBudget, resumePastStep, retryParkedStep, runById, stepById, ungateRun } from './sql/runs.js';

export const MAX_ATTEMPTS = 20;

export interface Actor {
  principal: Principal;
  agentId: string;
}

export interface RecoveryOptions {
  store: KernelStore;
  policy: (orgId: string) => Promise<PolicyLimits>;
  wake: () => void;
}

export function createRecovery(o: RecoveryOptions) {
  const { store } = o;

  /** The run under this agent (held for the transaction when `lock`), or 404. */
  async function lockRun(tx: Sql, agentId: string, runId: string, lock = true): Promise<RunRow> {
    const r = await runById(tx, runId, lock);
    if (!r || r.agent_id !== agentId) throw WorkflowErrors.RUN_NOT_FOUND(`No run ${runId} for agent ${agentId}`, { runId });
    return r;
  }

  async function stepOf(tx: Sql, r: RunRow, stepId: string): Promise<{ row: StepRow; step: Step }> {
    const row = await stepById(tx, r.id, stepId);
    const step = r.graph.steps.find((s) => s.id === stepId);
    if (!row || !step) throw RecoveryErrors.STEP_NOT_FOUND(`No step ${stepId} in run ${r.id}`, { runId: r.id, stepId });
    return { row, step };
  }

  /** The run's creator, or (`orAdmin`) an organization admin: org:manage on its organization. */
  async function requireCreator(p: Principal, r: RunRow): Promise<void> {
    if (p.userId === r.created_by) return;
    const admin = await authorizeOrgScopes(store, p, r.org_id, { required: 'org:manage' }).then(() => true, () => false);
    if (!admin) throw RecoveryErrors.NOT_RUN_CREATOR(`Only the run's creator or an organization admin may do this to run ${r.id}`, { runId: r.id });
  }

  const noop = (recovery: Recovery, r: RunRow) => ({
    reason: recovery.kind === 'retried' ? 'already_retried' : 'already_resolved',
    recorded: { at: recovery.at, by: recovery.by, outcome: recovery.outcome },
    runStatus: r.status,
  });

  /** A step parked on an exception (the run suspended on it), or the 409 that says why not. */
  function requireParked(r: RunRow, row: StepRow): void {
    if (isTerminal(r.status)) throw RecoveryErrors.RUN_TERMINAL(`Run ${r.id} is ${r.status}`, { runId: r.id, status: r.status });
    if (!(r.status === 'suspended' && r.gate?.kind === 'exception' && r.gate.stepId === row.step_id && row.status === 'suspended')) {
      throw RecoveryErrors.STEP_NOT_PARKED(`Step ${row.step_id} of run ${r.id} is not parked`, { stepId: row.step_id, status: row.status });
    }
  }

  const audit = (tx: UnitOfWork, r: RunRow, by: string, action: string, details: Record<string, unknown>) =>
    tx.audit({ orgId: r.org_id, action, actor: { type: 'user', id: by }, targetType: 'workflow_run', targetId: r.id, details });

  return {
    async retry(a: Actor, runId: string, stepId: string, body: { note?: string | undefined; resetRetries?: boolean | undefined }) {
      const answer = await store.unitOfWork(async (tx) => {
        const r = await lockRun(tx.sql, a.agentId, runId);
        const { row } = await stepOf(tx.sql, r, stepId);
        if (row.status !== 'suspended' && row.recovery) return { retried: false, ...noop(row.recovery, r) };
        requireParked(r, row);
        const toAttempt = row.attempt + 1;
        if (toAttempt > MAX_ATTEMPTS) {
          throw RecoveryErrors.STEP_RETRY_CAP(`Step ${stepId} has run ${row.attempt} attempts; at most ${MAX_ATTEMPTS} may run`, { stepId, attempt: row.attempt, toAttempt, maxAttempts: MAX_ATTEMPTS });
        }
        const next = mustTransition(r.status, { type: 'recover' });
        const recovery: Recovery = { seq: row.park_seq, kind: 'retried', at: Date.now(), by: a.principal.userId, outcome: 'retried' };
        await retryParkedStep(tx.sql, r.id, row.idx, body.resetRetries === true ? null : 0, JSON.stringify(recovery));
        await ungateRun(tx.sql, r.id, next.status);
        await audit(tx, r, a.principal.userId, 'workflows.step.retried', { stepId, toAttempt, resetRetries: body.resetRetries === true, ...(body.note !== undefined ? { note: body.note } : {}) });
        return { retried: true, attempt: toAttempt, runStatus: next.status, remainingParks: 0 };
      });
      if (answer.retried) o.wake();
      return answer;
    },

    async resolve(a: Actor, runId: string, stepId: string, body: { outcome?: 'skip' | 'complete' | 'fail' | undefined; output?: unknown; note?: string | undefined }) {
      // Who may act is settled before the unit of work: its lookups run outside it (on PGlite's one
      // connection they would wait for it). The run's creator and organization never change.
      const seen = await lockRun(store.sql, a.agentId, runId, false);
      await stepOf(store.sql, seen, stepId);
      requirePerson(a.principal, 'resolve a parked step');
      await requireCreator(a.principal, seen);
      const answer = await store.unitOfWork(async (tx) => {
        const r = await lockRun(tx.sql, a.agentId, runId);
        const { row, step } = await stepOf(tx.sql, r, stepId);
        const outcome = body.outcome ?? 'complete';
        if (outcome === 'complete') {
          if (body.output === undefined) throw validationFailed([{ path: 'output', constraint: 'required', message: 'output is required to resolve a step with complete' }]);
          if (Buffer.byteLength(JSON.stringify(body.output), 'utf8') > FIELD_MAX_BYTES) {
            throw RecoveryErrors.OUTPUT_TOO_LARGE(`output is over ${FIELD_MAX_BYTES} bytes of JSON`, { field: 'output', max: FIELD_MAX_BYTES });
          }
          if (step.outputSchema) {
            const issues = validateValue(step.outputSchema, body.output, 'output');
            if (issues.length > 0) throw RecoveryErrors.RESOLVE_OUTPUT_INVALID(`The output does not match the output schema of step ${stepId}`, { stepId, issues });
          }
        }
        if (row.status !== 'suspended' && row.recovery) return { resolved: false, ...noop(row.recovery, r) };
        requireParked(r, row);
        const recovery: Recovery = { seq: row.park_seq, kind: 'resolved', at: Date.now(), by: a.principal.userId, outcome };
        const details = { stepId, outcome, ...(body.note !== undefined ? { note: body.note } : {}) };
        if (outcome === 'fail') {
          const next = mustTransition(r.status, { type: 'fail' });
          await failParkedStep(tx.sql, r.id, row.idx, JSON.stringify(recovery));
          const code = row.error?.code ?? step.code ?? 'STEP_FAILED';
          await finishRun(tx.sql, r, next.status, { error: { code, message: row.error?.message ?? `step ${stepId} failed`, stepId } });
          await audit(tx, r, a.principal.userId, 'workflows.step.resolved', details);
          return { resolved: true, outcome, runStatus: next.status, remainingParks: 0 };
        }
        const next = mustTransition(r.status, { type: 'recover' });
        const asOutput = outcome === 'complete' && step.kind === 'output';
        await endParkedStep(tx.sql, r.id, row.idx, outcome === 'skip' ? 'skipped' : 'completed', outcome === 'complete' ? JSON.stringify(body.output) : null, JSON.stringify(recovery));
        await resumePastStep(tx.sql, r.id, next.status, row.idx + 1, asOutput, asOutput ? JSON.stringify(body.output) : null);
        await audit(tx, r, a.principal.userId, 'workflows.step.resolved', details);
        return { resolved: true, outcome, runStatus: next.status, remainingParks: 0 };
      });
      if (answer.resolved) o.wake();
      return answer;
    },

    async raiseBudget(a: Actor, runId: string, body: { maxCredits?: number | undefined; maxSteps?: number | undefined; maxJobSeconds?: number | undefined; maxDurationSeconds?: number | undefined; note?: string | undefined }) {
      const seen = await lockRun(store.sql, a.agentId, runId, false);
      await requireCreator(a.principal, seen);
      const policy = await o.policy(seen.org_id);
      const answer = await store.unitOfWork(async (tx) => {
        const r = await lockRun(tx.sql, a.agentId, runId);
        const asked = Object.fromEntries((['maxCredits', 'maxSteps', 'maxJobSeconds', 'maxDurationSeconds'] as const).filter((k) => body[k] !== undefined).map((k) => [k, body[k]!]));
        if (Object.keys(asked).length === 0) throw validationFailed([{ path: 'maxCredits', constraint: 'required', message: 'at least one of maxCredits, maxSteps, maxJobSeconds or maxDurationSeconds is required' }]);
        const budget = r.budget as Budget & Record<string, unknown>;
        const parked = r.status === 'gated' && r.gate?.kind === 'budget';
        // A raise the budget already holds, on a run no longer parked on it: the no-op.
        if (!parked && r.budget_raises.length > 0 && Object.entries(asked).every(([k, v]) => typeof budget[k] === 'number' && (budget[k] as number) >= v)) {
          return { raised: false, reason: 'already_raised', runStatus: r.status };
        }
        const low = Object.entries(asked).filter(([k, v]) => typeof budget[k] === 'number' && v <= (budget[k] as number));
        if (low.length > 0) throw validationFailed(low.map(([k]) => ({ path: k, constraint: 'exclusiveMinimum', message: `${k} must be above the run's current ${k} (${String(budget[k])})` })));
        const over = Object.entries(asked).filter(([k, v]) => v > policy[k as keyof PolicyLimits]);
        if (over.length > 0) {
          const [k, v] = over[0]!;
          throw RecoveryErrors.CAP_EXCEEDED(`${k} ${v} is above the organization's policy cap of ${policy[k as keyof PolicyLimits]}`, { field: k, cap: policy[k as keyof PolicyLimits] });
        }
        if (!parked) throw RecoveryErrors.BUDGET_NOT_RAISABLE(`Run ${r.id} is ${r.status}, not parked on its budget`, { runId: r.id, status: r.status });
        const raised = { ...r.budget, ...asked } as Budget;
        const gate = r.gate as Extract<Gate, { kind: 'budget' }>;
        const step = r.graph.steps.find((s) => s.id === gate.stepId);
        const resumed = raised.maxCredits === undefined || raised.spent.credits + (step?.credits ?? 0) <= raised.maxCredits;
        // Short of the reserve the run parks again, and its gate shows the cap now in force (the
        // park's `since` stays: the run has waited on its budget since then without a break).
        const next = resumed
          ? mustTransition(r.status, { type: 'resume' })
          : mustTransition(r.status, { type: 'repark_budget', since: gate.since, stepId: gate.stepId, spent: raised.spent.credits, cap: raised.maxCredits! });
        const status = next.status;
        const raises = [...r.budget_raises, { at: Date.now(), by: a.principal.userId, caps: asked, ...(body.note !== undefined ? { note: body.note } : {}) }];
        await raiseRunBudget(tx.sql, r.id, JSON.stringify(raised), JSON.stringify(raises), status, next.gate === null ? null : JSON.stringify(next.gate), raised.maxDurationSeconds);
        await audit(tx, r, a.principal.userId, 'workflows.budget.raised', { caps: asked, resumed });
        return { raised: true, budget: raised, runStatus: status, resumed };
      });
      if (answer.raised && (answer as { resumed?: boolean }).resumed) o.wake();
      return answer;
    },

    async erase(a: Actor, runId: string) {
      const seen = await lockRun(store.sql, a.agentId, runId, false);
      requirePerson(a.principal, 'erase a run');
      await requireCreator(a.principal, seen);
      return store.unitOfWork(async (tx) => {
        const r = await lockRun(tx.sql, a.agentId, runId);
        if (!isTerminal(r.status)) throw RecoveryErrors.RUN_NOT_TERMINAL(`Run ${r.id} is ${r.status}; cancel it first`, { runId: r.id, status: r.status, nextAction: 'cancel' });
        // The run's steps and step attempts go with it (on delete cascade).
        await deleteRun(tx.sql, r.id);
        // So does the free text its users wrote into its audit entries (retry and resolve notes, a
        // cancel's reason); the entries stay (contract W8).
        await createAuditRepo(tx.sql).eraseDetails(r.org_id, 'workflow_run', r.id, ['note', 'reason']);
        const purgeId = `wfp_${newId()}`;
        await audit(tx, r, a.principal.userId, 'workflows.run.erased', { purgeId });
        return { accepted: true, purgeId };
      });
    },
  };
}

export type RecoveryService = ReturnType<typeof createRecovery>;
