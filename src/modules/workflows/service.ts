/**
 * The workflow runtime's operations behind the routes: starting a run
 * (idempotent, admitted or gated under the organization's concurrency cap),
 * reading runs, and cancelling them. The executor (executor.ts) moves runs on.
 */
import { newId } from '../../model/ids.js';
import type { KernelStore } from '../../store/kernel.js';
import type { Sql } from '../../store/sql.js';
import { AppError } from '../../errors.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';
import { requestFingerprint, withIdempotency } from '../../api/kernel/idempotency.js';
import { BatchErrors, StartErrors, WorkflowErrors } from './errors.js';
import { checkGraph, stepsOf, validateValue, type Graph, type Issue } from './graph.js';
import { runDetail, runSummary, type Budget, type CancelState, type RunRow } from './model.js';
import { createWorkflowsRepo } from './repository.js';
import { closeOpenStep, countAdmissions, endRun, hasRunInFlight, insertRunWithSteps, lockOrgAdmissions, recordCancelRequest, runById } from './sql/runs.js';
import { isTerminal, mustTransition, type QuotaCode, type RunState, type RunStatus } from './state.js';
import type { PolicyLimits } from './seed.js';
import type { JsonSchema } from './graph.js';
import type { CustomerPrincipal, NotifyMode, NotifyTarget, Workspace } from './model.js';

export const FIELD_MAX_BYTES = 262_144;
/** A state seed's cap: 64 KB of JSON text (spec 03, run start limits). */
export const STATE_SEED_MAX_BYTES = 65_536;
export const BATCH_MAX = 200;
/** Single and batch starts share one key space per agent: a key seen by either is replayed by both. */
const START_ROUTE = 'POST /workflows/:agentId/runs';

export interface BatchItem {
  idempotencyKey: string;
  input?: unknown;
  budget?: StartBody['budget'];
  tags?: string[];
  correlationKey?: string;
}

export interface BatchBody {
  workflowId?: string;
  workflowName?: string;
  workflowVersionId?: string;
  items: BatchItem[];
  overCap?: 'gate' | 'reject';
  inFlight?: 'allow' | 'forbid';
  budget?: StartBody['budget'];
}

const CORRELATION = /^[A-Za-z0-9:_./-]{1,128}$/;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A batch item's problems (`{path, constraint, message}`, paths inside the item); records its key in `keys`. */
function checkBatchItem(raw: unknown, inputSchema: JsonSchema | null, keys: Set<string>): Issue[] {
  if (!isObj(raw)) return [{ path: 'item', constraint: 'type', message: 'an item must be an object' }];
  const issues: Issue[] = [];
  const known = new Set(['idempotencyKey', 'input', 'budget', 'tags', 'correlationKey']);
  for (const k of Object.keys(raw)) if (!known.has(k)) issues.push({ path: k, constraint: 'additionalProperties', message: `${k} is not a field of a batch item` });
  const key = raw.idempotencyKey;
  if (typeof key !== 'string' || key.length === 0 || key.length > 128) issues.push({ path: 'idempotencyKey', constraint: 'required', message: 'idempotencyKey is required: 1 to 128 characters' });
  else if (keys.has(key)) issues.push({ path: 'idempotencyKey', constraint: 'uniqueItems', message: `idempotencyKey ${key} is used by an earlier item of this batch` });
  else keys.add(key);
  if (raw.input !== undefined && Buffer.byteLength(JSON.stringify(raw.input), 'utf8') > FIELD_MAX_BYTES) issues.push({ path: 'input', constraint: 'maxLength', message: `input is over ${FIELD_MAX_BYTES} bytes of JSON` });
  else if (inputSchema) issues.push(...validateValue(inputSchema, raw.input, 'input'));
  if (raw.budget !== undefined) {
    if (!isObj(raw.budget)) issues.push({ path: 'budget', constraint: 'type', message: 'budget must be an object' });
    else {
      for (const [k, v] of Object.entries(raw.budget)) {
        const ok = k === 'maxCredits' ? typeof v === 'number' && Number.isFinite(v) && v > 0 : ['maxSteps', 'maxDurationSeconds', 'maxJobSeconds'].includes(k) && Number.isInteger(v) && (v as number) >= 1;
        if (!ok) issues.push({ path: `budget.${k}`, constraint: 'minimum', message: k === 'maxCredits' ? 'budget.maxCredits must be a number above 0' : `budget.${k} must be an integer of at least 1 (maxSteps, maxDurationSeconds, maxJobSeconds)` });
      }
    }
  }
  if (raw.tags !== undefined && (!Array.isArray(raw.tags) || raw.tags.length > 10 || raw.tags.some((t) => typeof t !== 'string' || t.length === 0 || t.length > 40))) {
    issues.push({ path: 'tags', constraint: 'maxItems', message: 'tags must be at most 10 strings of 1 to 40 characters' });
  }
  if (raw.correlationKey !== undefined && (typeof raw.correlationKey !== 'string' || !CORRELATION.test(raw.correlationKey))) {
    issues.push({ path: 'correlationKey', constraint: 'pattern', message: 'correlationKey must be 1 to 128 letters, digits, :, _, -, . or /' });
  }
  return issues;
}
const DEFAULT_BUDGET = { maxSteps: 100, maxDurationSeconds: 3600 };

export interface StartBody {
  workflowName?: string;
  workflowId?: string;
  graph?: Record<string, unknown>;
  script?: string;
  input?: unknown;
  idempotencyKey?: string;
  budget?: { maxCredits?: number; maxSteps?: number; maxDurationSeconds?: number; maxJobSeconds?: number };
  waitSeconds?: number;
  correlationKey?: string;
  tags?: string[];
  workflowVersionId?: string;
  /** A chat-composed definition (`dynamic`) of the agent: the run's origin is `compose`. */
  composeId?: string;
  originThreadId?: string;
  callback?: boolean;
  notifyMode?: NotifyMode;
  notifyTarget?: NotifyTarget;
  principal?: CustomerPrincipal;
  workspace?: Workspace;
  stateSeed?: unknown;
}

/** What a single start records beyond its definition, input and budget (a batch run has none of it). */
export interface StartExtras {
  originThreadId: string | null;
  callback: boolean;
  notify: { mode: NotifyMode; target: NotifyTarget | null };
  principal: CustomerPrincipal | null;
  workspace: Workspace | null;
  /** undefined: none given (JSON null is a seed). */
  stateSeed: unknown;
}

/** A single start's extras, checked: a callback needs a thread; the seed is bounded. */
function extrasOf(b: StartBody): StartExtras {
  if (b.callback === true && b.originThreadId === undefined) {
    throw StartErrors.CALLBACK_THREAD_REQUIRED('callback: true needs an originThreadId to call back on', { field: 'callback' });
  }
  if (b.stateSeed !== undefined && bytesOf(b.stateSeed) > STATE_SEED_MAX_BYTES) {
    throw KernelErrors.PAYLOAD_TOO_LARGE(`stateSeed is over ${STATE_SEED_MAX_BYTES} bytes of JSON`, { field: 'stateSeed', max: STATE_SEED_MAX_BYTES });
  }
  return {
    originThreadId: b.originThreadId ?? null, callback: b.callback ?? false, notify: { mode: b.notifyMode ?? 'app', target: b.notifyTarget ?? null },
    principal: b.principal ?? null, workspace: b.workspace ?? null, stateSeed: b.stateSeed,
  };
}

export interface Caller {
  userId: string;
  orgId: string;
  agentId: string;
  /** The caller may start inline graphs and scripts (workflows:write). */
  mayWrite: boolean;
}

/** What a start runs: a definition's pinned version, or an inline graph or script. */
export interface Target {
  workflowId: string | null;
  workflowName: string | null;
  versionId: string | null;
  form: 'graph' | 'script';
  origin: 'definition' | 'inline' | 'compose';
  graph: Graph;
  inputSchema?: JsonSchema | null;
}

export interface StartedBody {
  runId: string;
  status: RunStatus;
  workflowId: string | null;
  workflowName: string | null;
  startedAt: number | null;
  watchHint: ReturnType<typeof watchHint>;
}

export const validationFailed = (issues: readonly Issue[], extra: Record<string, unknown> = {}): AppError =>
  KernelErrors.VALIDATION_FAILED(issues.map((i) => i.message).join('; '), {
    field: issues[0]!.path, message: issues.map((i) => i.message), details: issues.map(({ path, constraint, message }) => ({ path, constraint, message })), ...extra,
  });

const tooLarge = (field: string) => KernelErrors.PAYLOAD_TOO_LARGE(`${field} is over ${FIELD_MAX_BYTES} bytes of JSON`, { field, max: FIELD_MAX_BYTES });
/** The JSON size of a body field (bodies nest at most 64 levels: kernel/json-body.ts). */
const bytesOf = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

export const watchHint = (agentId: string, runId: string) => ({ events: `/workflows/${agentId}/runs/${runId}/events`, poll: `/workflows/${agentId}/runs/${runId}` });

export interface ServiceOptions {
  store: KernelStore;
  /** WORKFLOW_FORCE_CANCEL_AFTER_MS */
  forceCancelAfterMs: number;
  /** Tells the in-process executor that a run is waiting. */
  wake: () => void;
}

export function createWorkflowService(o: ServiceOptions) {
  const { store } = o;
  const repo = createWorkflowsRepo(store.sql);

  /** What a start runs, resolved and checked: the definition and version, or the inline graph. */
  async function resolve(caller: Caller, b: StartBody, checkInput = true): Promise<Target> {
    const refs = (['workflowName', 'workflowId', 'composeId', 'graph', 'script'] as const).filter((k) => b[k] !== undefined);
    if (refs.length !== 1) {
      const message = 'exactly one of workflowName, workflowId, composeId, graph or script is required';
      throw validationFailed((refs.length === 0 ? ['workflowName'] : refs).map((path) => ({ path, constraint: 'oneOf', message })));
    }
    if (b.graph !== undefined && bytesOf(b.graph) > FIELD_MAX_BYTES) throw tooLarge('graph');
    if (b.script !== undefined && bytesOf(b.script) > FIELD_MAX_BYTES) throw tooLarge('script');
    if (b.input !== undefined && bytesOf(b.input) > FIELD_MAX_BYTES) throw tooLarge('input');
    if (b.graph !== undefined || b.script !== undefined) {
      if (!caller.mayWrite) {
        throw KernelErrors.INSUFFICIENT_SCOPE('This credential lacks the workflows:write scope.', { resourceType: 'agent', resourceId: caller.agentId, requiredScope: 'workflows:write' });
      }
      if (b.workflowVersionId !== undefined) throw validationFailed([{ path: 'workflowVersionId', constraint: 'not', message: 'workflowVersionId pins a version of a definition; an inline start has none' }]);
      if (b.graph !== undefined) {
        const issues = checkGraph(b.graph, 'graph');
        if (issues.length > 0) throw validationFailed(issues);
      }
      const form = b.graph !== undefined ? ('graph' as const) : ('script' as const);
      return { workflowId: null, workflowName: null, versionId: null, form, origin: 'inline' as const, graph: { steps: stepsOf(form, (b.graph as unknown as Graph) ?? null) } };
    }
    const def = await repo.findDefinition(caller.agentId, { id: b.workflowId ?? b.composeId, name: b.workflowName });
    // A draft from compose names a chat-composed (`dynamic`) definition of the agent; compose itself is not a route of this service.
    if (b.composeId !== undefined && !def?.dynamic) {
      throw WorkflowErrors.WORKFLOW_NOT_FOUND(`No composed workflow ${b.composeId} for agent ${caller.agentId}`, { workflowId: b.composeId });
    }
    if (!def) {
      const which = b.workflowId !== undefined ? `id ${b.workflowId}` : `name ${b.workflowName!}`;
      throw WorkflowErrors.WORKFLOW_NOT_FOUND(`No workflow with ${which} for agent ${caller.agentId}`, { workflowId: b.workflowId ?? null });
    }
    const versionId = b.workflowVersionId ?? def.active_version_id;
    if (versionId === null) throw validationFailed([{ path: b.workflowId !== undefined ? 'workflowId' : b.composeId !== undefined ? 'composeId' : 'workflowName', constraint: 'active', message: `workflow ${def.id} has no active version; pin one with workflowVersionId` }]);
    const version = await repo.version(def.id, versionId);
    if (!version) throw validationFailed([{ path: 'workflowVersionId', constraint: 'exists', message: `workflowVersionId ${versionId} is not a version of workflow ${def.id}` }]);
    if (version.input_schema && checkInput) {
      const issues = validateValue(version.input_schema, b.input, 'input');
      if (issues.length > 0) throw validationFailed(issues);
    }
    return {
      workflowId: def.id, workflowName: def.name, versionId: version.id, form: def.form, origin: b.composeId !== undefined ? ('compose' as const) : ('definition' as const),
      graph: { steps: stepsOf(def.form, version.graph) }, inputSchema: version.input_schema,
    };
  }

  /**
   * Inserts the run in one transaction with the admission decision and (when given) the idempotency
   * outcome. The decision is made on a count without the organization's lock, everything written,
   * and then checked under the lock just before the commit: the lock, held until the commit, covers
   * only that check, so concurrent starts of one organization wait on each other briefly. When the
   * check disagrees (another start took the last slot meanwhile), the transaction is undone and done
   * again with the lock taken first.
   */
  async function insertRun(caller: Caller, b: StartBody, target: Target, extras: StartExtras, claim?: { scope: string; route: string; key: string; claimId: string }) {
    const policy = await repo.policy(caller.orgId);
    const budget = budgetOf(b.budget, policy);
    const now = new Date();
    const admit = (c: AdmissionCounts) => mustTransition(null, { type: 'admit', cap: quotaHolding(c, policy), at: now.getTime() });
    const attempt = (lockFirst: boolean) => store.unitOfWork(async (tx) => {
      const state = admit(await admissionCounts(tx.sql, caller.orgId, { lock: lockFirst }));
      const body = await insertRunTx(tx.sql, caller, b, target, state, budget, null, now, extras);
      if (claim) await tx.idempotency.complete(claim, { status: 202, body });
      await tx.audit({
        orgId: caller.orgId, action: 'workflows.run.started', actor: { type: 'user', id: caller.userId }, targetType: 'workflow_run', targetId: body.runId,
        details: {
          agentId: caller.agentId, workflowId: target.workflowId, workflowVersionId: target.versionId, origin: target.origin, status: state.status,
          ...(extras.principal ? { principalKind: extras.principal.kind } : {}),
        },
      });
      if (!lockFirst && admit(await admissionCounts(tx.sql, caller.orgId, { lock: true, self: body.runId })).status !== state.status) throw new AdmissionChanged();
      return body;
    });
    try {
      return await attempt(false);
    } catch (e) {
      if (!(e instanceof AdmissionChanged)) throw e;
      return attempt(true);
    }
  }

  async function detailOf(r: RunRow, opts: { full: boolean; payloads: boolean; receipts: boolean }) {
    const steps = (await repo.steps([r.id])).get(r.id)!;
    const notifications = opts.full && opts.receipts ? await repo.notifications(r.id) : [];
    return runDetail(r, steps, { ...opts, notifications });
  }

  return {
    repo,

    /**
     * Starts a run. `key`: the idempotency key (header over body). Answers `{status, body}`: 202 with
     * the new run, or 200 with a replay.
     */
    async start(caller: Caller, b: StartBody, key: string | undefined): Promise<{ status: number; body: Record<string, unknown>; runId: string }> {
      const extras = extrasOf(b);
      const target = await resolve(caller, b);
      if (key === undefined) {
        const body = await insertRun(caller, b, target, extras);
        o.wake();
        return { status: 202, body: { runId: body.runId, status: body.status, watchHint: body.watchHint }, runId: body.runId };
      }
      const request = {
        scope: `agent:${caller.agentId}`, route: START_ROUTE, key,
        fingerprint: requestFingerprint({ workflow: target.workflowId ?? { form: target.form, graph: target.graph }, input: b.input ?? null }),
      };
      const result = await retryWhileInProgress(() =>
        withIdempotency(store.idempotency, request, async ({ claimId }) => {
          const body = await insertRun(caller, b, target, extras, { ...request, claimId });
          return { status: 202, body };
        }, { completedByRun: true, conflictDetails: (original) => ({ runId: (original?.body as { runId?: string } | undefined)?.runId ?? null }) }),
      );
      const stored = result.body as { runId: string; status: RunStatus; workflowId: string | null; workflowName: string | null; startedAt: number | null; watchHint: unknown };
      if (!result.replayed) {
        o.wake();
        return { status: 202, body: { runId: stored.runId, status: stored.status, watchHint: stored.watchHint }, runId: stored.runId };
      }
      const now = await repo.run(stored.runId);
      return {
        status: 200, runId: stored.runId,
        body: {
          runId: stored.runId, status: now?.status ?? stored.status, workflowId: stored.workflowId, workflowName: stored.workflowName,
          startedAt: now?.started_at?.getTime() ?? stored.startedAt, watchHint: stored.watchHint, idempotentReplay: true, deduplicated: true,
        },
      };
    },

    /**
     * Starts a batch (contract W4): every item checked first (a refused batch creates no run), then
     * one transaction admits the items in order under the organization's cap, replays keys seen
     * before, and records each new run's key.
     */
    async startBatch(caller: Caller, b: BatchBody): Promise<Record<string, unknown>> {
      if (b.items.length > BATCH_MAX) throw BatchErrors.BATCH_TOO_LARGE(`A batch holds at most ${BATCH_MAX} items; this one holds ${b.items.length}`, { max: BATCH_MAX, count: b.items.length });
      if ((b.workflowId === undefined) === (b.workflowName === undefined)) {
        const message = 'exactly one of workflowName or workflowId is required';
        throw validationFailed((b.workflowId === undefined ? ['workflowName'] : ['workflowName', 'workflowId']).map((path) => ({ path, constraint: 'oneOf', message })));
      }
      const ref: StartBody = b.workflowId !== undefined ? { workflowId: b.workflowId } : { workflowName: b.workflowName! };
      const target = await resolve(caller, b.workflowVersionId !== undefined ? { ...ref, workflowVersionId: b.workflowVersionId } : ref, false);
      const keys = new Set<string>();
      b.items.forEach((item, index) => {
        const issues = checkBatchItem(item, target.inputSchema ?? null, keys);
        if (issues.length > 0) throw BatchErrors.BATCH_ITEM_INVALID(`items[${index}] is invalid: ${issues[0]!.message}`, { index, issues });
      });
      const policy = await repo.policy(caller.orgId);
      const batchId = `wfb_${newId()}`;
      const now = new Date();
      const scope = `agent:${caller.agentId}`;
      const answer = await store.unitOfWork(async (tx) => {
        const counts = await admissionCounts(tx.sql, caller.orgId, { lock: true });
        if (b.inFlight === 'forbid') {
          if (await hasRunInFlight(tx.sql, target.workflowId)) throw BatchErrors.RUNS_IN_FLIGHT(`Workflow ${target.workflowId!} has runs in flight; inFlight is forbid`, { workflowId: target.workflowId });
        }
        const items: Record<string, unknown>[] = [];
        let accepted = 0;
        for (const item of b.items) {
          const start: StartBody = { input: item.input, budget: item.budget ?? b.budget, tags: item.tags, correlationKey: item.correlationKey };
          const claim = await tx.idempotency.claim({ scope, route: START_ROUTE, key: item.idempotencyKey, fingerprint: requestFingerprint({ workflow: target.workflowId, input: item.input ?? null }) });
          if (claim.kind === 'replay' || claim.kind === 'conflict') {
            const body = (claim.kind === 'replay' ? claim.body : claim.original?.body) as { runId?: string } | undefined;
            items.push({ idempotencyKey: item.idempotencyKey, ...(body?.runId ? { runId: body.runId } : {}), status: 'replayed' });
            continue;
          }
          if (claim.kind === 'in_progress') throw KernelErrors.IDEMPOTENCY_KEY_IN_PROGRESS(`A start with the idempotency key ${item.idempotencyKey} is still in progress; retry the batch with the same keys.`);
          const cap = quotaHolding(counts, policy);
          if (cap !== null && b.overCap === 'reject') {
            await tx.idempotency.abandon({ scope, route: START_ROUTE, key: item.idempotencyKey, claimId: claim.claimId });
            items.push({ idempotencyKey: item.idempotencyKey, status: 'rejected', code: cap });
            continue;
          }
          const state = mustTransition(null, { type: 'admit', cap, at: now.getTime() });
          const body = await insertRunTx(tx.sql, caller, start, target, state, budgetOf(start.budget, policy), batchId, now);
          await tx.idempotency.complete({ scope, route: START_ROUTE, key: item.idempotencyKey, claimId: claim.claimId }, { status: 202, body });
          if (state.status === 'queued') counts.active += 1;
          else counts.gated += 1;
          accepted += 1;
          items.push({ idempotencyKey: item.idempotencyKey, runId: body.runId, status: state.status, ...(state.gate ? { gate: state.gate } : {}) });
        }
        await tx.audit({
          orgId: caller.orgId, action: 'workflows.batch.started', actor: { type: 'user', id: caller.userId }, targetType: 'workflow_batch', targetId: batchId,
          details: { agentId: caller.agentId, workflowId: target.workflowId, items: b.items.length, accepted },
        });
        return { batchId, accepted, items };
      });
      o.wake();
      return answer;
    },

    /**
     * Waits up to `seconds` for the run to settle: its detail once terminal; else its status when the
     * time is up, or at once when it parks (suspended, or gated on its budget: only a person moves it on).
     */
    async awaitSettled(runId: string, seconds: number, opts: { payloads: boolean; receipts: boolean }, closed: () => boolean): Promise<{ detail: Record<string, unknown> } | { status: string | undefined }> {
      const until = Date.now() + seconds * 1000;
      for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
        const r = await repo.run(runId);
        if (r && isTerminal(r.status)) return { detail: await detailOf(r, { full: true, ...opts }) };
        const parked = r !== undefined && (r.status === 'suspended' || (r.status === 'gated' && (r.gate as { kind?: string } | null)?.kind === 'budget'));
        if (parked || Date.now() >= until || closed()) return { status: r?.status };
        await new Promise((res) => setTimeout(res, Math.min(pause, Math.max(0, until - Date.now()))));
      }
    },

    /** The run under this agent, or 404. */
    async runOf(agentId: string, runId: string): Promise<RunRow> {
      const r = await repo.run(runId);
      if (!r || r.agent_id !== agentId) throw WorkflowErrors.RUN_NOT_FOUND(`No run ${runId} for agent ${agentId}`, { runId });
      return r;
    },

    detailOf,

    async summaries(rows: readonly RunRow[]) {
      const steps = await repo.steps(rows.map((r) => r.id));
      return rows.map((r) => runSummary(r, steps.get(r.id)!));
    },

    /** Cancel (contract W6): at once with no step running; while one runs, a request then, after forceAvailableAt, abandoned. */
    async cancel(agentId: string, runId: string, mode: 'request' | 'force', reason: string | undefined, actor: { userId: string; orgId: string }) {
      const answer = await store.unitOfWork(async (tx) => {
        const r = await runById(tx.sql, runId, true);
        if (!r || r.agent_id !== agentId) throw WorkflowErrors.RUN_NOT_FOUND(`No run ${runId} for agent ${agentId}`, { runId });
        const nowMs = Date.now();
        const already = r.cancel;
        if (isTerminal(r.status)) {
          return { cancelRequested: already !== null, state: 'terminal', status: r.status, transitioned: false, ...(already ? { requestedAt: already.requestedAt } : {}), nextAction: 'none' };
        }
        const cancel: CancelState = already ?? { requestedAt: nowMs, forceAvailableAt: nowMs + o.forceCancelAfterMs, ...(reason !== undefined ? { reason } : {}) };
        const audit = (to: string) => tx.audit({
          orgId: actor.orgId, action: 'workflows.run.cancelled', actor: { type: 'user', id: actor.userId }, targetType: 'workflow_run', targetId: runId,
          details: { mode, from: r.status, to, ...(reason !== undefined ? { reason } : {}) },
        });
        if (r.status !== 'running') {
          const next = mustTransition(r.status, { type: 'cancel' });
          await finishRun(tx.sql, r, next.status, { cancel });
          await audit(next.status);
          return { cancelRequested: true, state: 'terminal', status: next.status, transitioned: true, requestedAt: cancel.requestedAt, forceAvailableAt: cancel.forceAvailableAt, nextAction: 'none' };
        }
        // A step runs. A second request or a force after forceAvailableAt escalates; before, nothing more happens.
        if (already !== null && nowMs >= already.forceAvailableAt) {
          const next = mustTransition(r.status, { type: 'force' });
          await finishRun(tx.sql, r, next.status, { cancel });
          await audit(next.status);
          return { cancelRequested: true, state: 'terminal', status: next.status, transitioned: true, forced: true, requestedAt: cancel.requestedAt, forceAvailableAt: cancel.forceAvailableAt, nextAction: 'none' };
        }
        if (already === null) {
          await recordCancelRequest(tx.sql, runId, JSON.stringify(cancel));
          await audit('cancel_requested');
        }
        return { cancelRequested: true, state: 'cancel_requested', status: r.status, transitioned: false, requestedAt: cancel.requestedAt, forceAvailableAt: cancel.forceAvailableAt, nextAction: 'cancel_again' };
      });
      return answer;
    },
  };
}

/**
 * Ends a run in a terminal status (the caller has the move from the state machine and holds the
 * row): its running step and open attempt are closed, the lease released, the duration recorded.
 */
/**
 * Ends a run in status `to` if it is still in `r.status` (and, with `leaseOwner`, still held by
 * that executor). A run ending `completed` has no step left open, so that is one statement; any
 * other end closes the open step and attempt too, and wants a transaction around it.
 */
export async function finishRun(
  sql: Sql, r: Pick<RunRow, 'id' | 'status'>, to: RunStatus, extra: { cancel?: CancelState; error?: unknown; leaseOwner?: string } = {},
): Promise<boolean> {
  const ended = await endRun(sql, r.id, r.status, to, {
    cancel: extra.cancel ? JSON.stringify(extra.cancel) : null, error: extra.error ? JSON.stringify(extra.error) : null, leaseOwner: extra.leaseOwner ?? null,
  });
  if (!ended) return false;
  if (to !== 'completed') await closeOpenStep(sql, r.id, to);
  return true;
}

export type WorkflowService = ReturnType<typeof createWorkflowService>;

/** The run's budget: the asked caps (the batch's or the start's), defaults filled in, each lowered to the policy. */
export function budgetOf(asked: StartBody['budget'], policy: PolicyLimits): Budget {
  const a = asked ?? {};
  return {
    ...(a.maxCredits !== undefined ? { maxCredits: Math.min(a.maxCredits, policy.maxCredits) } : {}),
    maxSteps: Math.min(a.maxSteps ?? DEFAULT_BUDGET.maxSteps, policy.maxSteps),
    maxDurationSeconds: Math.min(a.maxDurationSeconds ?? DEFAULT_BUDGET.maxDurationSeconds, policy.maxDurationSeconds),
    ...(a.maxJobSeconds !== undefined ? { maxJobSeconds: Math.min(a.maxJobSeconds, policy.maxJobSeconds) } : {}),
    unit: 'credits',
    spent: { credits: 0, steps: 0 },
  };
}

/** Inserts one run and its steps in `tx`, in the state the admission gave it. */
export async function insertRunTx(tx: Sql, caller: Caller, b: StartBody, target: Target, state: RunState, budget: Budget, batchId: string | null, now: Date, extras: StartExtras | null = null, trigger: 'api' | 'template' = 'api'): Promise<StartedBody> {
  const id = `wfr_${newId()}`;
  const started = state.status === 'queued' ? now : null;
  const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
  await insertRunWithSteps(tx, {
    id, orgId: caller.orgId, agentId: caller.agentId, workflowId: target.workflowId, workflowName: target.workflowName, versionId: target.versionId,
    form: target.form, origin: target.origin, status: state.status, gate: state.gate === null ? null : JSON.stringify(state.gate), createdBy: caller.userId,
    correlationKey: b.correlationKey ?? null, tags: JSON.stringify(b.tags ?? []), input: b.input === undefined ? null : JSON.stringify(b.input),
    graph: JSON.stringify(target.graph), budget: JSON.stringify(budget), createdAt: now, startedAt: started,
    deadlineAt: started === null ? null : new Date(started.getTime() + budget.maxDurationSeconds * 1000), batchId,
    originThreadId: extras?.originThreadId ?? null, callback: extras?.callback ?? false, notifyMode: extras?.notify.mode ?? null,
    notifyTarget: json(extras?.notify.target), principal: json(extras?.principal), workspace: json(extras?.workspace),
    stateSeed: extras === null || extras.stateSeed === undefined ? null : JSON.stringify(extras.stateSeed), trigger,
  }, JSON.stringify(target.graph.steps));
  return { runId: id, status: state.status, workflowId: target.workflowId, workflowName: target.workflowName, startedAt: started?.getTime() ?? null, watchHint: watchHint(caller.agentId, id) };
}

/**
 * The organization's admission counts: runs queued or running, runs gated on a quota, runs
 * suspended; `self`, a run this transaction inserted, is not counted. `lock`: under the
 * organization's lock, held until `tx` ends (admissions of one organization then decide one at a time).
 */
export async function admissionCounts(tx: Sql, orgId: string, o: { lock: boolean; self?: string }): Promise<AdmissionCounts> {
  if (o.lock) await lockOrgAdmissions(tx, orgId);
  return countAdmissions(tx, orgId, o.self ?? null);
}


export interface AdmissionCounts {
  /** Runs queued or running. */
  active: number;
  /** Runs gated on a quota. */
  gated: number;
  suspended: number;
}

/**
 * The quota a start is held back by (contract W8), or null: the suspended cap while the organization
 * holds `maxSuspendedRuns` suspended runs; else the concurrency cap while `maxConcurrentRuns` runs are
 * queued or running, or while runs gated before it wait (a new start never overtakes them).
 */
export function quotaHolding(c: AdmissionCounts, policy: Pick<PolicyLimits, 'maxConcurrentRuns' | 'maxSuspendedRuns'>): QuotaCode | null {
  if (c.suspended >= policy.maxSuspendedRuns) return 'suspended_cap';
  return c.active >= policy.maxConcurrentRuns || c.gated > 0 ? 'concurrency_cap' : null;
}

/** A start's admission, decided without the organization's lock, came out otherwise under it: the start is done again. */
class AdmissionChanged extends Error {}

/**
 * A start racing another with the same key and request waits for it (up to 10 s) and answers its
 * replay, instead of refusing: both callers then hold the one run.
 */
async function retryWhileInProgress<T>(attempt: () => Promise<T>): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof AppError) || e.code !== 'IDEMPOTENCY_KEY_IN_PROGRESS' || Date.now() > until) throw e;
      await new Promise((res) => setTimeout(res, 25));
    }
  }
}
