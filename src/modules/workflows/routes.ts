/**
 * The workflow routes of spec 03 part 4.3: definitions and their rollup,
 * run starts (single and batch), run list, detail and event log, cancel,
 * recovery and erasure. Each declares its access (the agent in the path with
 * its scope), its wf-* bucket and its schemas; errors answer in the workflow
 * shape.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { grantedOf } from '../../api/kernel/access.js';
import { authorizeOrgScopes, scopesSatisfy, type Principal } from '../../api/kernel/auth.js';
import type { RateLimiter } from '../../api/kernel/rate-limit.js';
import type { SchemaIssue } from '../../api/kernel/schema.js';
import { INSTANT_RANGE, withinInstantBounds } from '../../api/kernel/instant.js';
import { hasHeader, keyedInBody, type BlindRetry } from '../../api/kernel/store-outage.js';
import { keysetCursor, keysetFetch, keysetPage } from '../../api/kernel/pagination.js';
import type { KernelStore } from '../../store/kernel.js';
import { countIn, type Buckets, EXECUTE_SCOPE, onAgent, READ_OUTPUTS_SCOPE, READ_SCOPE, WORKFLOWS_BASE, WRITE_SCOPE } from './context.js';
import { controlUnavailable, StartErrors, WorkflowErrors } from './errors.js';
import type { Issue } from './graph.js';
import { definitionItem, eventItem } from './model.js';
import { sortValueOf, type RunSort } from './repository.js';
import {
  AgentParams, CancelAnswer, CancelBody, DefinitionsPage, DefinitionsQuery, DetailQuery, errorResponses, RunDetail, RunParams, RunsPage, RunsQuery,
  StartAnswer, StartBodySchema, DefinitionParams, RollupQuery, RollupAnswer, BatchAnswer, BatchBodySchema,
  EventsPage, EventsQuery, ORIGIN_THREAD_RULE, type EventsQueryT,
  type CancelBodyT, type RollupQueryT, type BatchBodyT, type DefinitionsQueryT, type DetailQueryT, type RunsQueryT, type StartBodyT,
} from './schemas.js';
import { validationFailed, type BatchBody, type WorkflowService } from './service.js';
import type { Rollups } from './rollup.js';
import type { RecoveryService } from './recovery.js';
import { BudgetBody, RecoveryAnswer, ResolveBody, RetryBody, StepParams, type BudgetBodyT, type ResolveBodyT, type RetryBodyT } from './schemas.js';
import { RUN_STATUSES, type RunStatus } from './state.js';

const CORRELATION_KEY = /^[A-Za-z0-9:_./-]{1,128}$/;

/** A query's VALIDATION_FAILED on GET /runs carries `issues[]` beside `details[]` (contract W5). */
const queryInvalid = (issues: readonly Issue[]) =>
  validationFailed(issues, { issues: issues.map(({ path, constraint, message }) => ({ path, constraint, message })) });

const badCursor = () => WorkflowErrors.BAD_CURSOR('cursor is not a cursor this route returned for this sort');
/** A definition's last update (Unix ms) and id. */
const DEFINITIONS_CURSOR = keysetCursor(['epochMs', 'text'], { bad: badCursor });
/** The sort it was written for, then a run's sort value (Unix ms or duration ms) and id. */
const runsCursor = (sort: RunSort) => keysetCursor(['integer', 'text'], { tag: sort, bad: badCursor });

/** A start's schema failure: `ORIGIN_THREAD_INVALID` when the origin thread is at fault, else VALIDATION_FAILED. */
function startInvalid(issues: readonly SchemaIssue[]) {
  if (issues.some((i) => i.path === 'originThreadId')) return StartErrors.ORIGIN_THREAD_INVALID(ORIGIN_THREAD_RULE, { field: 'originThreadId', max: 256 });
  return validationFailed(issues);
}

const holds = (p: Principal, scope: string): boolean => p.scopes === null || scopesSatisfy(p.scopes, scope);

export interface WorkflowRouteDeps {
  service: WorkflowService;
  store: KernelStore;
  limiter: RateLimiter;
  buckets: Buckets;
  rollups: Rollups;
  recovery: RecoveryService;
}

export function registerWorkflowRoutes(app: FastifyInstance, deps: WorkflowRouteDeps): void {
  const { service, store, limiter, buckets: BUCKETS } = deps;
  const read = { access: onAgent(READ_SCOPE), errorShape: 'workflows' as const };
  // The control routes (starts, cancel, recovery, erase) answer 503 CONTROL_UNAVAILABLE while the store is down.
  const execute = { access: onAgent(EXECUTE_SCOPE), errorShape: 'workflows' as const, storeUnavailable: controlUnavailable };
  // A start is safe to repeat with its idempotency key (header or body); a batch when every item has one.
  const keyOf = (o: unknown): unknown => (typeof o === 'object' && o !== null ? (o as { idempotencyKey?: unknown }).idempotencyKey : undefined);
  const bodyKey = keyedInBody((body) => typeof keyOf(body) === 'string');
  const startRetry: BlindRetry = { idempotencyKey: (req) => hasHeader(req, 'idempotency-key') || bodyKey.idempotencyKey(req) };
  const batchRetry: BlindRetry = keyedInBody((body) => {
    const items = (body as { items?: unknown }).items;
    return Array.isArray(items) && items.length > 0 && items.every((i) => typeof keyOf(i) === 'string');
  });

  /** Whether the caller is the run's creator or holds org:manage on its organization. */
  async function creatorOrManager(p: Principal, createdBy: string, orgId: string): Promise<boolean> {
    if (p.userId === createdBy) return true;
    return authorizeOrgScopes(store, p, orgId, { required: 'org:manage' }).then(() => true, () => false);
  }

  app.get<{ Params: { agentId: string }; Querystring: DefinitionsQueryT }>(`${WORKFLOWS_BASE}/definitions`, {
    schema: { tags: ['workflows'], summary: "The agent's deployed workflow definitions", params: AgentParams, querystring: DefinitionsQuery, response: { 200: DefinitionsPage, ...errorResponses } },
    config: read,
    onRequest: countIn(limiter, BUCKETS.read),
  }, async (req) => {
    const { agentId } = grantedOf(req);
    const q = req.query;
    const limit = Number(q.limit ?? 50);
    const after = q.cursor === undefined ? undefined : DEFINITIONS_CURSOR.decode(q.cursor);
    const rows = await service.repo.listDefinitions(agentId!, {
      form: q.form, includeComposed: q.includeComposed === 'true', limit: keysetFetch(limit),
      after: after ? { at: after[0], id: after[1] } : undefined,
    });
    const page = keysetPage(rows, limit, (last) => DEFINITIONS_CURSOR.encode([last.updated_at, last.id]));
    return { items: page.items.map(definitionItem), nextCursor: page.nextCursor };
  });

  app.get<{ Params: { agentId: string; workflowId: string }; Querystring: RollupQueryT }>(`${WORKFLOWS_BASE}/definitions/:workflowId/rollup`, {
    schema: { tags: ['workflows'], summary: "A definition's runs by UTC creation day", params: DefinitionParams, querystring: RollupQuery, response: { 200: RollupAnswer, ...errorResponses } },
    config: read,
    onRequest: countIn(limiter, BUCKETS.read),
  }, async (req) => {
    const { agentId } = grantedOf(req);
    const def = await service.repo.findDefinition(agentId!, { id: req.params.workflowId });
    if (!def) throw WorkflowErrors.WORKFLOW_NOT_FOUND(`No workflow with id ${req.params.workflowId} for agent ${agentId!}`, { workflowId: req.params.workflowId });
    return deps.rollups.rollup(def.id, req.query);
  });

  app.post<{ Params: { agentId: string }; Body: StartBodyT }>(`${WORKFLOWS_BASE}/runs`, {
    schema: { tags: ['workflows'], summary: 'Start a run of a deployed definition or an inline graph or script', params: AgentParams, body: StartBodySchema, response: { 200: StartAnswer, 202: StartAnswer, ...errorResponses } },
    config: { ...execute, validationError: startInvalid, blindRetry: startRetry },
    // input, graph and script may each be 256 KB (413 PAYLOAD_TOO_LARGE names the field past it).
    bodyLimit: 1024 * 1024,
    onRequest: countIn(limiter, BUCKETS.start),
  }, async (req, reply) => {
    const g = grantedOf(req);
    const header = req.headers['idempotency-key'];
    const key = typeof header === 'string' ? header : req.body.idempotencyKey;
    if (key !== undefined && (key.length === 0 || key.length > 128)) {
      throw validationFailed([{ path: 'Idempotency-Key', constraint: 'maxLength', message: 'Idempotency-Key must be 1 to 128 characters' }]);
    }
    const caller = { userId: g.principal.userId, orgId: g.orgId!, agentId: g.agentId!, mayWrite: holds(g.principal, WRITE_SCOPE) };
    const started = await service.start(caller, req.body, key);
    const wait = req.body.waitSeconds ?? 0;
    if (started.status === 202 && wait > 0) {
      const waited = await service.awaitSettled(started.runId, wait, { payloads: holds(g.principal, READ_OUTPUTS_SCOPE), receipts: true }, () => req.raw.socket.destroyed);
      if ('detail' in waited) return reply.status(200).send(waited.detail);
      // Not settled: the usual 202, with the status the run has now (running, or parked), not the one it started with.
      if (waited.status !== undefined) return reply.status(202).send({ ...started.body, status: waited.status });
    }
    return reply.status(started.status).send(started.body);
  });

  app.post<{ Params: { agentId: string }; Body: BatchBodyT }>(`${WORKFLOWS_BASE}/runs/batch`, {
    schema: { tags: ['workflows'], summary: 'Start up to 200 runs of one definition, each with its own idempotency key', params: AgentParams, body: BatchBodySchema, response: { 202: BatchAnswer, ...errorResponses } },
    config: { ...execute, blindRetry: batchRetry },
    bodyLimit: 2 * 1024 * 1024,
    onRequest: countIn(limiter, BUCKETS.batch),
  }, async (req, reply) => {
    const g = grantedOf(req);
    const caller = { userId: g.principal.userId, orgId: g.orgId!, agentId: g.agentId!, mayWrite: holds(g.principal, WRITE_SCOPE) };
    return reply.status(202).send(await service.startBatch(caller, req.body as BatchBody));
  });

  app.get<{ Params: { agentId: string }; Querystring: RunsQueryT }>(`${WORKFLOWS_BASE}/runs`, {
    schema: { tags: ['workflows'], summary: "The agent's runs, newest first by default", params: AgentParams, querystring: RunsQuery, response: { 200: RunsPage, ...errorResponses } },
    config: { ...read, validationError: (issues: readonly SchemaIssue[]) => queryInvalid(issues) },
    onRequest: countIn(limiter, BUCKETS.read),
  }, async (req) => {
    const { agentId } = grantedOf(req);
    const q = req.query;
    let statuses: RunStatus[] | undefined;
    if (q.status !== undefined) {
      const given = q.status.split(',').map((s) => s.trim());
      const unknown = given.filter((s) => !RUN_STATUSES.includes(s as RunStatus));
      if (unknown.length > 0) throw queryInvalid([{ path: 'status', constraint: 'enum', message: `status must be a comma-separated list of ${RUN_STATUSES.join(', ')}` }]);
      statuses = given as RunStatus[];
    }
    if (q.correlationKey !== undefined && !CORRELATION_KEY.test(q.correlationKey)) {
      throw WorkflowErrors.CORRELATION_KEY_INVALID('correlationKey must be 1 to 128 letters, digits, :, _, -, . or /', { correlationKey: q.correlationKey.slice(0, 200) });
    }
    const updatedSince = q.updatedSince === undefined ? undefined : Number(q.updatedSince);
    // Unix ms the store holds as a timestamp (the kernel's instant bounds): 15 digits reach year 33658.
    if (updatedSince !== undefined && !withinInstantBounds(updatedSince)) {
      throw queryInvalid([{ path: 'updatedSince', constraint: 'maximum', message: `updatedSince must be Unix milliseconds ${INSTANT_RANGE}` }]);
    }
    const min = q.minDurationMs === undefined ? undefined : Number(q.minDurationMs);
    const max = q.maxDurationMs === undefined ? undefined : Number(q.maxDurationMs);
    if (min !== undefined && max !== undefined && min > max) throw queryInvalid([{ path: 'maxDurationMs', constraint: 'minimum', message: 'maxDurationMs must be at least minDurationMs' }]);
    const sort = (q.sort ?? '-createdAt') as RunSort;
    const limit = Number(q.limit ?? 50);
    const cursor = runsCursor(sort);
    const after = q.cursor === undefined ? undefined : cursor.decode(q.cursor);
    const rows = await service.repo.listRuns(agentId!, {
      statuses, workflowId: q.workflowId, trigger: q.trigger, updatedSince,
      batchId: q.batchId, correlationKey: q.correlationKey, tags: q.tag, minDurationMs: min, maxDurationMs: max, sort, limit: keysetFetch(limit),
      after: after ? { value: after[0], id: after[1] } : undefined,
    });
    const page = keysetPage(rows, limit, (last) => cursor.encode([sortValueOf(last, sort), last.id]));
    return { items: await service.summaries(page.items), nextCursor: page.nextCursor };
  });

  app.get<{ Params: { agentId: string; runId: string }; Querystring: DetailQueryT }>(`${WORKFLOWS_BASE}/runs/:runId`, {
    schema: { tags: ['workflows'], summary: 'One run: its summary, steps and budget; with fields=full its payloads', params: RunParams, querystring: DetailQuery, response: { 200: RunDetail, ...errorResponses } },
    config: read,
    onRequest: countIn(limiter, BUCKETS.read),
  }, async (req) => {
    const g = grantedOf(req);
    const r = await service.runOf(g.agentId!, req.params.runId);
    const full = req.query.fields === 'full';
    const receipts = full && (await creatorOrManager(g.principal, r.created_by, r.org_id));
    return service.detailOf(r, { full, payloads: holds(g.principal, READ_OUTPUTS_SCOPE), receipts });
  });

  app.get<{ Params: { agentId: string; runId: string }; Querystring: EventsQueryT }>(`${WORKFLOWS_BASE}/runs/:runId/events`, {
    schema: { tags: ['workflows'], summary: "A run's event log after a seq, oldest first", params: RunParams, querystring: EventsQuery, response: { 200: EventsPage, ...errorResponses } },
    config: read,
    onRequest: countIn(limiter, BUCKETS.read),
  }, async (req) => {
    const g = grantedOf(req);
    const r = await service.runOf(g.agentId!, req.params.runId);
    const after = Number(req.query.after ?? 0);
    const items = await service.repo.events(r.id, after, Number(req.query.limit ?? 50));
    return { items: items.map(eventItem), nextAfter: items.at(-1)?.seq ?? after };
  });

  app.post<{ Params: { agentId: string; runId: string }; Body: CancelBodyT | undefined }>(`${WORKFLOWS_BASE}/runs/:runId/cancel`, {
    schema: { tags: ['workflows'], summary: 'Cancel a run: at once with no step running, else at the next step boundary; forced after forceAvailableAt', params: RunParams, body: CancelBody, response: { 200: CancelAnswer, ...errorResponses } },
    config: execute,
    onRequest: countIn(limiter, BUCKETS.mutate),
    // The body is optional: none means the defaults.
    preValidation: async (req) => {
      if (req.body === undefined || req.body === null) req.body = {};
    },
  }, async (req: FastifyRequest<{ Params: { agentId: string; runId: string }; Body: CancelBodyT | undefined }>) => {
    const g = grantedOf(req);
    const body = req.body ?? {};
    return service.cancel(g.agentId!, req.params.runId, body.mode ?? 'request', body.reason, { userId: g.principal.userId, orgId: g.orgId! });
  });

  const mutate = { ...execute };
  const emptyBody = async (req: FastifyRequest) => {
    if (req.body === undefined || req.body === null) req.body = {};
  };
  const actor = (req: FastifyRequest) => {
    const g = grantedOf(req);
    return { principal: g.principal, agentId: g.agentId! };
  };
  type StepReq = { Params: { agentId: string; runId: string; stepId: string } };

  app.post<StepReq & { Body: RetryBodyT }>(`${WORKFLOWS_BASE}/runs/:runId/steps/:stepId/retry`, {
    schema: { tags: ['workflows'], summary: 'Re-arm a step parked on an exception', params: StepParams, body: RetryBody, response: { 200: RecoveryAnswer, ...errorResponses } },
    config: mutate, onRequest: countIn(limiter, BUCKETS.mutate), preValidation: emptyBody,
  }, async (req) => deps.recovery.retry(actor(req), req.params.runId, req.params.stepId, req.body));

  app.post<StepReq & { Body: ResolveBodyT }>(`${WORKFLOWS_BASE}/runs/:runId/steps/:stepId/resolve`, {
    schema: { tags: ['workflows'], summary: 'Resolve a parked step (skip, complete with an output, or fail the run); person only', params: StepParams, body: ResolveBody, response: { 200: RecoveryAnswer, ...errorResponses } },
    // An output may be 256 KB (413 OUTPUT_TOO_LARGE past it).
    bodyLimit: 1024 * 1024,
    config: mutate, onRequest: countIn(limiter, BUCKETS.mutate), preValidation: emptyBody,
  }, async (req) => deps.recovery.resolve(actor(req), req.params.runId, req.params.stepId, req.body));

  app.post<{ Params: { agentId: string; runId: string }; Body: BudgetBodyT }>(`${WORKFLOWS_BASE}/runs/:runId/budget`, {
    schema: { tags: ['workflows'], summary: 'Raise the budget of a run parked on it', params: RunParams, body: BudgetBody, response: { 200: RecoveryAnswer, ...errorResponses } },
    config: mutate, onRequest: countIn(limiter, BUCKETS.mutate), preValidation: emptyBody,
  }, async (req) => deps.recovery.raiseBudget(actor(req), req.params.runId, req.body));

  app.delete<{ Params: { agentId: string; runId: string } }>(`${WORKFLOWS_BASE}/runs/:runId`, {
    schema: { tags: ['workflows'], summary: 'Erase a terminal run with its steps; person only', params: RunParams, response: { 202: RecoveryAnswer, ...errorResponses } },
    config: mutate, onRequest: countIn(limiter, BUCKETS.mutate),
  }, async (req, reply) => reply.status(202).send(await deps.recovery.erase(actor(req), req.params.runId)));
}
