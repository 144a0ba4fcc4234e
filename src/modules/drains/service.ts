/**
 * The drains family's service: what each drain route does, between the route (which parses and
 * answers) and the repository (repository.ts). A mutation and its audit entry commit in one unit of
 * work; a state move goes through the drain domain (src/drains/move.ts); verify and test enqueue a
 * probe for a worker (verify.ts), the API sending nothing itself.
 *
 * It also turns a validated create or PATCH body into a new drain or a patch, applying the rules
 * that need context: which types this deployment offers, what endpoint each type accepts and
 * whether it is signed (the destination table, src/destinations/), content only with
 * acknowledgement, agents only of the organization.
 */
import { newId } from '../../model/ids.js';
import type { Drain, DrainType } from '../../model/drain.js';
import { isVerifiedForEndpoint } from '../../model/drain.js';
import type { DeliveryKind } from '../../model/delivery.js';
import type { DrainPatch } from './tables/drains.js';
import type { DrainUnitOfWork } from './tables/index.js';
import { generateSecret } from '../../security/webhook-secret.js';
import { isAllowedHost } from '../../security/ssrf-guard.js';
import type { Principal } from '../../api/kernel/auth.js';
import { decodeCursor, encodeCursor, keysetFetch, keysetPage } from '../../api/kernel/pagination.js';
import { DrainErrors, drainNotFound, drainValidation } from './errors.js';
import { actorOf, loadDrain, type DrainDeps } from './context.js';
import { deliveryReadForm, drainReadForm, last4 } from './read-form.js';
import { checkDrainBody, checkDrainEndpoint, type DrainInput } from './validate.js';
import { bindDrainRepository } from './repository.js';
import { enqueueTest, enqueueVerification } from './verify.js';
import type { AuditQuery, DeliveriesQuery, DrainCreateBody, DrainParams, DrainPatchBody, DrainRead } from './schemas.js';
import { INITIAL_STATE, movesBy } from '../../drains/lifecycle.js';
import { moveDrain, moveDrainAsItIs, MOVE_REFUSALS } from '../../drains/move.js';
import { auditDrain, DRAIN_TARGET } from '../../audit/drain-audit.js';
import { destinationOf, typesWhere } from '../../destinations/index.js';
import { HOUR_MS } from '../../model/time.js';

export const MAX_DRAINS = { standard: 5, enterprise: 10 } as const;

/** scheme://host:port of an endpoint, the unit header values are given for; null when there is none. */
function originOf(endpoint: string | null): string | null {
  if (endpoint === null) return null;
  try {
    return new URL(endpoint).origin;
  } catch {
    return null;
  }
}

function checkTypeAvailable(deps: DrainDeps, type: DrainType): void {
  if (!deps.config.drains.typesEnabled.includes(type)) {
    throw DrainErrors.DRAIN_TYPE_UNAVAILABLE(`Drain type ${type} is not available yet.`, { field: 'type' });
  }
}

/** The endpoint a drain of `type` gets from this body, checked; undefined when the body does not set one. */
async function resolveEndpoint(deps: DrainDeps, type: DrainType, input: DrainInput, creating: boolean): Promise<string | undefined> {
  const rule = destinationOf(type).endpoint;
  if (rule.from === 'site') {
    if (input.endpoint !== undefined) {
      throw DrainErrors.DRAIN_ENDPOINT_NOT_ALLOWED(`${type} drains derive their endpoint from site.`, { field: 'endpoint' });
    }
    if (creating && !input.site) throw drainValidation('site', [`site is required for ${type}`]);
    return input.site ? rule.url(deps.config.drains, input.site) : undefined;
  }
  if (input.site !== undefined) throw drainValidation('site', [`site applies to ${typesWhere((d) => d.endpoint.from === 'site').join(', ')} only`]);
  if (input.endpoint === undefined) {
    if (creating) throw drainValidation('endpoint', [`endpoint is required for ${type}`]);
    return undefined;
  }
  const endpoint = await checkDrainEndpoint(input.endpoint, deps.config.endpointAllowHosts);
  if (rule.intakeHosts) {
    const intake = rule.intakeHosts(deps.config.drains);
    const host = new URL(endpoint).hostname.toLowerCase();
    const accepted = intake.some((h) => (h.startsWith('.') ? host.endsWith(h) : host === h));
    if (!accepted && !isAllowedHost(host, deps.config.endpointAllowHosts)) {
      throw DrainErrors.DRAIN_ENDPOINT_NOT_ALLOWED(`${type} accepts only its intake hosts (${intake.join(', ')}).`, { field: 'endpoint' });
    }
  }
  return endpoint;
}

function checkSigningAndContent(type: DrainType, input: DrainInput): void {
  if (input.secret !== undefined && !destinationOf(type).signs) {
    throw drainValidation('secret', [`only ${typesWhere((d) => d.signs).join(', ')} drains are signed; other types authenticate with headers`]);
  }
  if (input.includeContent === true && input.includeContentAck !== true) {
    throw DrainErrors.DRAIN_CONTENT_ACK_REQUIRED('includeContent requires includeContentAck: true.', { field: 'includeContentAck' });
  }
}

async function checkAgents(deps: DrainDeps, orgId: string, input: DrainInput): Promise<void> {
  if (!Array.isArray(input.agents)) return;
  const outside = await deps.store.auth.agentsOutsideOrg(orgId, input.agents);
  if (outside.length > 0) {
    throw DrainErrors.DRAIN_AGENT_NOT_IN_ORG(`Agents outside the organization: ${outside.slice(0, 5).join(', ')}.`, { field: 'agents' });
  }
}

const sealHeaders = (deps: DrainDeps, headers: { name: string; value: string }[]) =>
  headers.map((h) => ({ name: h.name, value: deps.store.secretBox.seal(h.value), last4: last4(h.value) }));

export async function buildNewDrain(deps: DrainDeps, orgId: string, principal: Principal, input: DrainInput): Promise<{ drain: Drain; secret: string | undefined }> {
  if (!input.name) throw drainValidation('name', ['name is required']);
  if (!input.type) throw drainValidation('type', ['type is required']);
  const type = input.type;
  checkTypeAvailable(deps, type);
  checkSigningAndContent(type, input);
  const endpoint = await resolveEndpoint(deps, type, input, true);
  await checkAgents(deps, orgId, input);
  const org = await deps.store.auth.org(orgId);
  const max = MAX_DRAINS[org?.plan ?? 'standard'];
  if ((await deps.drainTables.drains.countLive(orgId)) >= max) {
    throw DrainErrors.DRAIN_LIMIT_REACHED(`This organization already has ${max} drains, its limit.`);
  }
  const destination = destinationOf(type);
  const secret = destination.signs ? input.secret ?? generateSecret() : undefined;
  const now = new Date();
  const drain: Drain = {
    id: `drn_${newId().toLowerCase()}`,
    orgId,
    name: input.name,
    type,
    endpoint: endpoint ?? null,
    site: input.site ?? null,
    format: destination.formats ? input.format ?? 'json' : 'json',
    headers: sealHeaders(deps, input.headers ?? []),
    secret: secret === undefined ? null : deps.store.secretBox.seal(secret),
    previousSecret: null,
    rotationStartedAt: null,
    rotationExpiresAt: null,
    selectors: {
      sources: input.sources ?? null,
      minSeverity: input.minSeverity ?? 'info',
      agents: input.agents ?? '*',
      environments: input.environments ?? ['production'],
      includeContent: input.includeContent ?? false,
    },
    sampling: input.sampling ?? null,
    redact: input.redact ?? null,
    scrubRules: input.scrubRules ?? null,
    state: INITIAL_STATE,
    pauseReason: null,
    verifiedAt: null,
    verification: null,
    version: 1,
    createdBy: { type: 'user', id: principal.userId },
    createdAt: now,
    updatedAt: now,
  };
  return { drain, secret };
}

export interface DrainChange {
  patch: DrainPatch;
  /** Names of the fields whose value changes (for the audit entry). */
  changed: string[];
  /** The endpoint moves: the drain waits for verification again (the `endpoint_changed` event). */
  endpointChanged: boolean;
}

export async function buildDrainPatch(deps: DrainDeps, drain: Drain, input: DrainInput): Promise<DrainChange> {
  checkSigningAndContent(drain.type, input);
  const endpoint = await resolveEndpoint(deps, drain.type, input, false);
  await checkAgents(deps, drain.orgId, input);
  const patch: DrainPatch = {};
  const changed: string[] = [];
  let endpointChanged = false;
  const set = <K extends keyof DrainPatch>(field: K, value: DrainPatch[K], current: unknown) => {
    if (JSON.stringify(value) === JSON.stringify(current)) return;
    patch[field] = value;
    changed.push(field);
  };
  if (input.name !== undefined) set('name', input.name, drain.name);
  if (input.site !== undefined) set('site', input.site, drain.site);
  if (endpoint !== undefined && endpoint !== drain.endpoint) {
    set('endpoint', endpoint, drain.endpoint);
    // Part 3: a new endpoint must prove ownership again (the route moves the drain by
    // `endpoint_changed`); records keep buffering meanwhile. The old endpoint's verification proves
    // nothing for the new one (a pause and resume, or the quota ladder's reset, would otherwise
    // deliver to it unverified).
    patch.verifiedAt = null;
    endpointChanged = true;
    // Write-only header values were given for the old destination (an Authorization for a log
    // vendor): they do not follow the drain to another origin unless given again with it.
    if (input.headers === undefined && drain.headers.length > 0 && originOf(endpoint) !== originOf(drain.endpoint)) {
      patch.headers = [];
      changed.push('headers');
    }
  }
  if (input.format !== undefined && destinationOf(drain.type).formats) set('format', input.format, drain.format);
  if (input.headers !== undefined) {
    patch.headers = sealHeaders(deps, input.headers);
    changed.push('headers');
  }
  if (input.secret !== undefined) {
    // A secret set directly replaces the current one and closes any rotation window.
    Object.assign(patch, { secret: deps.store.secretBox.seal(input.secret), previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null });
    changed.push('secret');
  }
  const selectors = { ...drain.selectors };
  if (input.sources !== undefined) selectors.sources = input.sources;
  if (input.minSeverity !== undefined) selectors.minSeverity = input.minSeverity;
  if (input.agents !== undefined) selectors.agents = input.agents;
  if (input.environments !== undefined) selectors.environments = input.environments;
  if (input.includeContent !== undefined) selectors.includeContent = input.includeContent;
  set('selectors', selectors, drain.selectors);
  if (input.sampling !== undefined) set('sampling', input.sampling, drain.sampling);
  if (input.redact !== undefined) set('redact', input.redact, drain.redact);
  if (input.scrubRules !== undefined) set('scrubRules', input.scrubRules, drain.scrubRules);
  return { patch, changed, endpointChanged };
}

export const VERIFY_ATTEMPTS_PER_HOUR = 5;
export const ROTATION_WINDOW_MS = 24 * 3_600_000;

/** What `verify` answers: the verification started, or the seconds until the drain's hourly budget has room. */
export type VerifyOutcome = { ok: true; verificationId: string; expiresAt: Date } | { ok: false; retryAfterSeconds: number };

export function createDrainService(deps: DrainDeps) {
  const { store, drainTables: tables } = deps;
  const readForm = (d: Drain): Promise<DrainRead> => drainReadForm(tables, d, deps.config.quota);
  /** A unit of work with the family's repository bound to its transaction (repository.ts). */
  const inUnit = <T>(fn: (tx: DrainUnitOfWork) => Promise<T>): Promise<T> => store.unitOfWork((tx) => fn(bindDrainRepository(tx)));
  const load = (params: DrainParams): Promise<Drain> => loadDrain(tables, params);

  return {
    /** Creates a drain; `secret`: the generated or given signing secret, answered once. */
    async create(orgId: string, principal: Principal, body: DrainCreateBody): Promise<{ read: DrainRead; secret: string | undefined }> {
      const input = checkDrainBody(body);
      const { drain, secret } = await buildNewDrain(deps, orgId, principal, input);
      // The drain and its audit entry commit together.
      await inUnit(async (tx) => {
        await tx.drains.insert(drain);
        await auditDrain(tx, actorOf(principal), 'logs.drain.created', drain);
      });
      return { read: await readForm(drain), secret };
    },

    async update(params: DrainParams, principal: Principal, body: DrainPatchBody): Promise<DrainRead> {
      const drain = await load(params);
      const input = checkDrainBody(body);
      const { patch, changed, endpointChanged } = await buildDrainPatch(deps, drain, input);
      if (changed.length === 0) return readForm(drain);
      const updated = await inUnit(async (tx) => {
        const result = await tx.drains.update(drain.orgId, drain.id, patch, true);
        if (!result) throw drainNotFound();
        if (!endpointChanged) {
          await auditDrain(tx, actorOf(principal), 'logs.drain.updated', result, { changed });
          return result;
        }
        // Moved from the row this transaction just wrote (and holds until it commits): the move and
        // the update are one audit entry, as they are one mutation.
        const moved = await moveDrain(tx, result, 'endpoint_changed', actorOf(principal), { changed });
        if (!moved.ok) throw moved.error.code === MOVE_REFUSALS.gone ? drainNotFound() : moved.error;
        return moved.drain;
      });
      return readForm(updated);
    },

    async remove(params: DrainParams, principal: Principal): Promise<void> {
      const drain = await load(params);
      await inUnit(async (tx) => {
        if (!(await tx.drains.softDelete(drain.orgId, drain.id))) throw drainNotFound();
        await auditDrain(tx, actorOf(principal), 'logs.drain.deleted', { ...drain, state: drain.state });
      });
    },

    /** Starts an ownership verification: a worker sends it (src/deliver/probes.ts); its outcome lands in `verification` and in deliveries. */
    async verify(params: DrainParams, principal: Principal, now = new Date()): Promise<VerifyOutcome> {
      const drain = await load(params);
      const window = await tables.verifications.windowSince(drain.id, new Date(now.getTime() - HOUR_MS));
      if (window.count >= VERIFY_ATTEMPTS_PER_HOUR) {
        return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(((window.oldest?.getTime() ?? now.getTime()) + HOUR_MS - now.getTime()) / 1000)) };
      }
      const started = await inUnit((tx) => enqueueVerification(tx, store.secretBox, drain, actorOf(principal), now));
      return { ok: true, ...started };
    },

    /** Enqueues a test batch for a worker, under the batch id answered. */
    async test(params: DrainParams, principal: Principal, now = new Date()): Promise<{ batchId: string; enqueuedAt: Date }> {
      const drain = await load(params);
      // Spec 01 part 1: delivery begins only once the destination's ownership is verified; a test
      // batch is a delivery, with the drain's stored header values, so it waits for it too.
      if (!isVerifiedForEndpoint(drain)) {
        throw DrainErrors.DRAIN_NOT_VERIFIED('This drain\'s endpoint has not passed verification; verify it before sending a test batch.');
      }
      // A worker sends it through the real delivery path (encode, gzip, sign, POST, retry, account)
      // under this batch id; the probe and its audit entry commit together.
      const batchId = newId();
      await inUnit(async (tx) => {
        await enqueueTest(tx, drain, actorOf(principal), batchId, now);
        await auditDrain(tx, actorOf(principal), 'logs.drain.test_sent', drain, { batchId });
      });
      return { batchId, enqueuedAt: now };
    },

    async pause(params: DrainParams, principal: Principal, reason: string | undefined): Promise<DrainRead> {
      const drain = await load(params);
      const updated = await inUnit(async (tx) => {
        // From any state: a race with another move is decided again from the drain as it now is.
        const moved = await moveDrainAsItIs(tx, drain, 'paused_manually', actorOf(principal), reason === undefined ? {} : { reason });
        if (moved.ok) return moved.drain;
        throw moved.error.code === MOVE_REFUSALS.gone ? drainNotFound() : moved.error;
      });
      return readForm(updated);
    },

    async resume(params: DrainParams, principal: Principal): Promise<DrainRead> {
      const drain = await load(params);
      // Never straight to healthy: it must prove itself again. A drain whose endpoint was never
      // verified (a new drain, or one moved to another endpoint) goes back to waiting for it.
      // A drain that is not paused is answered as it is.
      if (!movesBy(drain, 'resumed')) return readForm(drain);
      const result = await inUnit((tx) => moveDrainAsItIs(tx, drain, 'resumed', actorOf(principal)));
      if (result.ok) return readForm(result.drain);
      if (result.error.code === MOVE_REFUSALS.gone) throw drainNotFound();
      // No longer paused by the time it was moved: the drain as it now is.
      return readForm(result.current ?? (await load(params)));
    },

    /**
     * Opens a rotation window with a new secret (answered once), or with `finalize` closes the open
     * window: the previous secret stops signing.
     */
    async rotateSecret(params: DrainParams, principal: Principal, finalize: boolean, now = new Date()): Promise<DrainRead | { secret: string; rotation: { startedAt: string; expiresAt: string } }> {
      const drain = await load(params);
      if (!destinationOf(drain.type).signs || !drain.secret) {
        throw DrainErrors.DRAIN_NOT_SIGNED(`${drain.type} drains are not signed; they authenticate with configured headers.`);
      }
      const windowOpen = drain.rotationExpiresAt !== null && drain.rotationExpiresAt > now && drain.previousSecret !== null;
      if (finalize) {
        if (!windowOpen) return readForm(drain);
        const updated = await inUnit(async (tx) => {
          const result = await tx.drains.update(drain.orgId, drain.id, { previousSecret: null, rotationStartedAt: null, rotationExpiresAt: null }, true);
          if (!result) throw drainNotFound();
          await auditDrain(tx, actorOf(principal), 'logs.drain.secret_rotated', result, { finalized: true });
          return result;
        });
        return readForm(updated);
      }
      if (windowOpen) {
        throw DrainErrors.DRAIN_ROTATION_IN_PROGRESS('A rotation window is open; finalize it first (finalize=true).');
      }
      const secret = generateSecret();
      const expiresAt = new Date(now.getTime() + ROTATION_WINDOW_MS);
      await inUnit(async (tx) => {
        const updated = await tx.drains.update(
          drain.orgId,
          drain.id,
          { secret: store.secretBox.seal(secret), previousSecret: drain.secret, rotationStartedAt: now, rotationExpiresAt: expiresAt },
          true,
        );
        if (!updated) throw drainNotFound();
        await auditDrain(tx, actorOf(principal), 'logs.drain.secret_rotated', updated, { finalized: false });
      });
      return { secret, rotation: { startedAt: now.toISOString(), expiresAt: expiresAt.toISOString() } };
    },

    /** A page of the drain's delivery attempts of the last seven days, newest first. */
    async deliveries(params: DrainParams, query: DeliveriesQuery) {
      const drain = await load(params);
      const { kind, cursor } = query;
      const limit = Number(query.limit);
      const after = cursor === undefined ? undefined : decodeCursor(cursor);
      const rows = await tables.deliveries.page(drain.id, {
        kind: kind as DeliveryKind | undefined,
        limit: keysetFetch(limit),
        after: after && { startedAt: after.at, id: after.id },
      });
      const page = keysetPage(rows, limit, (last) => encodeCursor(last.startedAt, last.id));
      return { deliveries: page.items.map(deliveryReadForm), nextCursor: page.nextCursor };
    },

    /** A page of the organization's drain audit entries (no other family's), newest first. */
    async auditPage(orgId: string, query: AuditQuery) {
      const { action, drainId, cursor } = query;
      const limit = Number(query.limit);
      // Drain entries only: the organization's log holds every family's entries.
      const rows = await store.audit.page(orgId, {
        targetType: DRAIN_TARGET, action, targetId: drainId, limit: keysetFetch(limit), after: cursor === undefined ? undefined : decodeCursor(cursor),
      });
      const page = keysetPage(rows, limit, (last) => encodeCursor(last.at, last.id));
      return {
        entries: page.items.map((e) => ({ id: e.id, action: e.action, actor: e.actor, drainId: e.targetId, details: e.details, at: e.at.toISOString() })),
        nextCursor: page.nextCursor,
      };
    },
  };
}

export type DrainService = ReturnType<typeof createDrainService>;
