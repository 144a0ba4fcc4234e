/**
 * Replays of a drain (docs/delivery.md#replays): a time window of the platform copy sent again
 * through the drain as it is configured now. The API records the request (`queued`) with its audit
 * entry in one unit of work and answers 202; a worker claims and sends it (src/backlog/replay-runner.ts).
 * At most one replay a drain is not ended, which the store's unique index decides under any race.
 */
import type { FastifyInstance } from 'fastify';
import { newId } from '../../model/ids.js';
import type { Drain } from '../../model/drain.js';
import { isVerifiedForEndpoint } from '../../model/drain.js';
import type { Replay } from './tables/replays.js';
import { RESOURCE_ID } from '../../api/kernel/access.js';
import { INSTANT_RANGE, instantOf } from '../../api/kernel/instant.js';
import { decodeCursor, encodeCursor, keysetFetch, keysetPage } from '../../api/kernel/pagination.js';
import type { Bucket } from '../../api/kernel/rate-limit.js';
import { auditDrain } from '../../audit/drain-audit.js';
import { DAY_MS, HOUR_MS } from '../../model/time.js';
import { actorOf, drainAccess, DRAINS_BASE, loadDrain, principalOf, type DrainDeps, type DrainParams } from './context.js';
import { DrainErrors, drainValidation, replayNotFound } from './errors.js';
import { drainBodyError } from './validation-error.js';
import { bindDrainRepository } from './repository.js';
import { replaySchemas, type ReplayBody, type ReplayParams, type ReplayRead, type ReplaysQuery } from './replay-schemas.js';

/** The widest window one replay may take. */
export const MAX_REPLAY_WINDOW_MS = 7 * DAY_MS;
/** A replay id: the drain ids' style (`drn_`), its own prefix. */
export const newReplayId = (): string => `rpl_${newId().toLowerCase()}`;

/** The organization's replay requests an hour: a bucket of its own, beside the drain routes' budgets. */
export function replayBucket(perHour: number): Bucket {
  return { name: 'log-drains-replay', limit: perHour, windowMs: HOUR_MS, error: DrainErrors.DRAIN_REPLAY_RATE_LIMITED };
}

export function registerReplayRoutes(app: FastifyInstance, deps: DrainDeps): void {
  const { store, drainTables } = deps;
  // A request spends the replay bucket; reads and cancels the drain routes' own budgets.
  const access = drainAccess(deps, replayBucket(deps.config.drains.rateLimits.replaysPerHour));
  const path = `${DRAINS_BASE}/:drainId/replays`;

  app.post<{ Params: DrainParams; Body: ReplayBody }>(path, { schema: replaySchemas.create, config: { access, validationError: drainBodyError } }, async (req, reply) => {
    const principal = principalOf(req);
    const now = Date.now();
    const window = replayWindow(req.body, now, deps.config.logRetentionDays);
    const drain = await loadDrain(drainTables, req.params);
    refuseNotDelivering(drain);
    const replay = await store.unitOfWork(async (uow) => {
      const tx = bindDrainRepository(uow);
      const made = await tx.replays.insert({
        id: newReplayId(), orgId: drain.orgId, drainId: drain.id, since: window.since, until: window.until,
        requestedBy: actorOf(principal), createdAt: new Date(now),
      });
      if (!made) return null;
      await auditDrain(tx, actorOf(principal), 'logs.drain.replay_requested', drain, {
        replayId: made.id, since: made.since.toISOString(), until: made.until.toISOString(),
      });
      return made;
    });
    if (!replay) {
      const open = await drainTables.replays.open(drain.id);
      throw DrainErrors.DRAIN_REPLAY_IN_PROGRESS('This drain has a replay queued or running; cancel it or wait for it to end.', { replayId: open?.id ?? null });
    }
    return reply.status(202).send(replayReadForm(replay));
  });

  app.get<{ Params: DrainParams; Querystring: ReplaysQuery }>(path, { schema: replaySchemas.list, config: { access } }, async (req) => {
    const drain = await loadDrain(drainTables, req.params);
    const limit = Number(req.query.limit);
    const after = req.query.cursor === undefined ? undefined : decodeCursor(req.query.cursor);
    const rows = await drainTables.replays.list(drain.orgId, drain.id, keysetFetch(limit), after);
    const page = keysetPage(rows, limit, (last) => encodeCursor(last.createdAt, last.id));
    return { replays: page.items.map(replayReadForm), nextCursor: page.nextCursor };
  });

  app.get<{ Params: ReplayParams }>(`${path}/:replayId`, { schema: replaySchemas.get, config: { access } }, async (req) => {
    const drain = await loadDrain(drainTables, req.params);
    return replayReadForm(await loadReplay(deps, drain, req.params.replayId));
  });

  app.delete<{ Params: ReplayParams }>(`${path}/:replayId`, { schema: replaySchemas.cancel, config: { access } }, async (req) => {
    const principal = principalOf(req);
    const drain = await loadDrain(drainTables, req.params);
    const replay = await loadReplay(deps, drain, req.params.replayId);
    const cancelled = await store.unitOfWork(async (uow) => {
      const tx = bindDrainRepository(uow);
      const c = await tx.replays.cancel(drain.orgId, drain.id, replay.id);
      if (c) await auditDrain(tx, actorOf(principal), 'logs.drain.replay_cancelled', drain, { replayId: c.id, recordsSent: c.recordsSent });
      return c;
    });
    if (!cancelled) {
      const now = await loadReplay(deps, drain, replay.id);
      throw DrainErrors.DRAIN_REPLAY_ENDED(`This replay has ended (${now.status}).`, { status: now.status });
    }
    return replayReadForm(cancelled);
  });
}

async function loadReplay(deps: DrainDeps, drain: Drain, replayId: string): Promise<Replay> {
  if (!RESOURCE_ID.test(replayId)) throw replayNotFound();
  const replay = await deps.drainTables.replays.get(drain.orgId, drain.id, replayId);
  if (!replay) throw replayNotFound();
  return replay;
}

/** Refused for a drain that does not deliver now: paused (a replay would wait behind it), or never verified for its endpoint. */
function refuseNotDelivering(drain: Drain): void {
  if (drain.state === 'paused') {
    throw DrainErrors.DRAIN_NOT_DELIVERING('This drain is paused; resume it before replaying into it.', { state: drain.state });
  }
  if (drain.state === 'pending_verification' || !isVerifiedForEndpoint(drain)) {
    throw DrainErrors.DRAIN_NOT_VERIFIED('This drain\'s endpoint has not passed verification; verify it before replaying into it.');
  }
}

/**
 * The window of a request: both bounds in the log reads' forms, since not after until, within the
 * platform copy's retention (older records are gone) and at most 7 days wide. An until after now is
 * taken as now: a replay sends what the platform copy holds when it is requested.
 */
export function replayWindow(body: ReplayBody, nowMs: number, retentionDays: number): { since: Date; until: Date } {
  const since = bound('since', body.since, nowMs);
  const until = new Date(Math.min(bound('until', body.until, nowMs).getTime(), nowMs));
  if (since.getTime() > until.getTime()) throw drainValidation('since', ['since must not be after until (nor after now)']);
  if (since.getTime() < nowMs - retentionDays * DAY_MS) {
    throw drainValidation('since', [`since must be within the platform copy's retention (${retentionDays} days)`]);
  }
  if (until.getTime() - since.getTime() > MAX_REPLAY_WINDOW_MS) throw drainValidation('until', ['until must be at most 7 days after since']);
  return { since, until };
}

function bound(name: 'since' | 'until', raw: string, nowMs: number): Date {
  const at = instantOf(name, raw, nowMs);
  if (at === 'malformed') throw drainValidation(name, [`${name} must be an ISO 8601 date or date-time with a zone, or relative such as 15m, 2h, 7d`]);
  if (at === 'out_of_range') throw drainValidation(name, [`${name} must lie ${INSTANT_RANGE}`]);
  return at;
}

export function replayReadForm(r: Replay): ReplayRead {
  return {
    id: r.id,
    orgId: r.orgId,
    drainId: r.drainId,
    since: r.since.toISOString(),
    until: r.until.toISOString(),
    status: r.status,
    progress: {
      recordsTotal: r.recordsTotal,
      recordsRead: r.recordsRead,
      recordsSent: r.recordsSent,
      batchesSent: r.batchesSent,
      position: r.position && { ts: r.position.ts, recordId: r.position.id },
    },
    error: r.error,
    requestedBy: r.requestedBy,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    endedAt: r.endedAt?.toISOString() ?? null,
  };
}
