/**
 * Drain routes under /admin/orgs/:orgId/log-drains (spec 01 part 4). Every
 * route: bearer auth, the deployment switch (404 while drains are off), the
 * organization's visibility and the sensitive `logs:manage` scope.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ulid } from 'ulid';
import { AppError } from '../../../errors.js';
import type { Config } from '../../../config/config.js';
import type { Store } from '../../../store/store.js';
import type { Transport } from '../../../deliver/transport.js';
import type { Logger } from '../../../telemetry/logger.js';
import { DELIVERY_KINDS, type DeliveryKind, type DeliveryRecord } from '../../../model/delivery.js';
import type { Drain } from '../../../model/drain.js';
import { generateSecret } from '../../../sign/standard-webhooks.js';
import { authenticate, authorizeOrg, type Principal } from '../../auth.js';
import { drainNotFound, drainValidation } from '../../errors.js';
import { checkDrainEndpoint, parseDrainBody } from './validate.js';
import { drainReadForm, last4 } from './read-form.js';
import { recordAudit, type Actor } from './audit.js';
import { runVerification, startVerification } from './verify.js';

export const MANAGE_SCOPE = 'logs:manage';
export const MAX_DRAINS = { standard: 5, enterprise: 10 } as const;
const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export interface DrainRouteDeps {
  config: Config;
  store: Store;
  transport: Transport;
  logger: Logger;
}

interface OrgParams {
  orgId: string;
}
interface DrainParams extends OrgParams {
  drainId: string;
}

const actorOf = (p: Principal): Actor => ({ type: 'user', id: p.userId });

export function registerDrainRoutes(app: FastifyInstance, deps: DrainRouteDeps): void {
  const { config, store } = deps;
  const base = '/admin/orgs/:orgId/log-drains';

  async function guard(req: FastifyRequest<{ Params: OrgParams }>): Promise<Principal> {
    const principal = await authenticate(req, store);
    if (!config.logDrainsEnabled) throw drainNotFound();
    const { orgId } = req.params;
    if (!ID_PATTERN.test(orgId)) throw new AppError(400, 'VALIDATION_FAILED', 'orgId is malformed', { field: 'orgId' });
    await authorizeOrg(store, principal, orgId, MANAGE_SCOPE);
    return principal;
  }

  async function loadDrain(params: DrainParams): Promise<Drain> {
    if (!ID_PATTERN.test(params.drainId)) throw drainNotFound();
    const drain = await store.drains.get(params.orgId, params.drainId);
    if (!drain) throw drainNotFound();
    return drain;
  }

  app.get<{ Params: OrgParams }>(base, async (req) => {
    await guard(req);
    const org = await store.auth.org(req.params.orgId);
    const drains = await store.drains.listByOrg(req.params.orgId);
    return {
      drains: await Promise.all(drains.map((d) => drainReadForm(store, d))),
      limits: { maxDrains: MAX_DRAINS[org?.plan ?? 'standard'] },
    };
  });

  app.post<{ Params: OrgParams }>(base, async (req, reply) => {
    const principal = await guard(req);
    const orgId = req.params.orgId;
    const input = parseDrainBody(req.body, 'create');
    if (!input.name) throw drainValidation('name', ['name is required']);
    if (!input.type) throw drainValidation('type', ['type is required']);
    if (input.type === 'vendor-a') {
      if (input.endpoint !== undefined) throw new AppError(422, 'DRAIN_ENDPOINT_NOT_ALLOWED', 'vendor-a derives its endpoint from site', { field: 'endpoint' });
      if (!input.site) throw drainValidation('site', ['site is required for vendor-a']);
    } else {
      if (input.site !== undefined) throw drainValidation('site', ['site applies to vendor-a only']);
      if (!input.endpoint) throw drainValidation('endpoint', [`endpoint is required for ${input.type}`]);
    }
    if (input.secret !== undefined && input.type !== 'http') throw drainValidation('secret', ['only http drains are signed']);
    if (input.includeContent && input.includeContentAck !== true) {
      throw new AppError(422, 'DRAIN_CONTENT_ACK_REQUIRED', 'includeContent requires includeContentAck: true', { field: 'includeContentAck' });
    }
    const endpoint =
      input.type === 'vendor-a'
        ? config.vendorAIntakeUrl.replace('{site}', input.site!)
        : await checkDrainEndpoint(input.endpoint!, config.endpointAllowHosts);
    if (Array.isArray(input.agents)) {
      const outside = await store.auth.agentsOutsideOrg(orgId, input.agents);
      if (outside.length > 0) throw new AppError(422, 'DRAIN_AGENT_NOT_IN_ORG', `agents outside the organization: ${outside.slice(0, 5).join(', ')}`, { field: 'agents' });
    }
    const org = await store.auth.org(orgId);
    if ((await store.drains.countLive(orgId)) >= MAX_DRAINS[org?.plan ?? 'standard']) {
      throw new AppError(422, 'DRAIN_LIMIT_REACHED', `This organization already has ${MAX_DRAINS[org?.plan ?? 'standard']} drains.`);
    }
    const secret = input.type === 'http' ? input.secret ?? generateSecret() : undefined;
    const now = new Date();
    const drain: Drain = {
      id: `drn_${ulid().toLowerCase()}`,
      orgId,
      name: input.name,
      type: input.type,
      endpoint,
      site: input.site ?? null,
      format: input.type === 'http' ? input.format ?? 'json' : 'json',
      headers: (input.headers ?? []).map((h) => ({ name: h.name, value: store.secretBox.seal(h.value), last4: last4(h.value) })),
      secret: secret === undefined ? null : store.secretBox.seal(secret),
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
      state: 'pending_verification',
      pauseReason: null,
      verifiedAt: null,
      verification: null,
      version: 1,
      createdBy: { type: 'user', id: principal.userId },
      createdAt: now,
      updatedAt: now,
    };
    try {
      await store.drains.insert(drain);
    } catch (e) {
      if ((e as { code?: string }).code === '23505') {
        throw new AppError(409, 'DRAIN_NAME_TAKEN', `A drain named ${JSON.stringify(input.name)} already exists.`, { field: 'name' });
      }
      throw e;
    }
    await recordAudit(store, actorOf(principal), 'logs.drain.created', drain);
    const read = await drainReadForm(store, drain);
    return reply.status(201).send(secret === undefined ? read : { ...read, secret });
  });

  app.get<{ Params: DrainParams }>(`${base}/:drainId`, async (req) => {
    await guard(req);
    return drainReadForm(store, await loadDrain(req.params));
  });

  app.delete<{ Params: DrainParams }>(`${base}/:drainId`, async (req, reply) => {
    const principal = await guard(req);
    const drain = await loadDrain(req.params);
    if (!(await store.drains.softDelete(drain.orgId, drain.id))) throw drainNotFound();
    await recordAudit(store, actorOf(principal), 'logs.drain.deleted', drain);
    return reply.status(204).send();
  });

  app.post<{ Params: DrainParams }>(`${base}/:drainId/verify`, async (req, reply) => {
    const principal = await guard(req);
    const drain = await loadDrain(req.params);
    const started = await startVerification(store, drain);
    // The attempt runs after the answer; its outcome lands in `verification` and in deliveries.
    setImmediate(() => {
      runVerification({ ...deps, drain, verification: started, actor: actorOf(principal) }).catch((e) =>
        deps.logger.error({ event: 'drain.verify_failed', drainId: drain.id, err: (e as Error).message }, 'verification crashed'),
      );
    });
    return reply.status(202).send({ verificationId: started.verificationId, expiresAt: started.expiresAt.toISOString() });
  });

  app.get<{ Params: DrainParams; Querystring: Record<string, string | string[] | undefined> }>(
    `${base}/:drainId/deliveries`,
    async (req) => {
      await guard(req);
      const drain = await loadDrain(req.params);
      const q = req.query;
      const single = (k: string): string | undefined => {
        const v = q[k];
        if (Array.isArray(v)) throw new AppError(400, 'VALIDATION_FAILED', `${k} may be given once`, { field: k });
        return v;
      };
      const kindRaw = single('kind');
      if (kindRaw !== undefined && !DELIVERY_KINDS.includes(kindRaw as DeliveryKind)) {
        throw new AppError(400, 'VALIDATION_FAILED', `kind must be one of ${DELIVERY_KINDS.join(', ')}`, { field: 'kind' });
      }
      const limitRaw = single('limit');
      let limit = 20;
      if (limitRaw !== undefined) {
        if (!/^\d+$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 100) {
          throw new AppError(400, 'VALIDATION_FAILED', 'limit must be an integer from 1 to 100', { field: 'limit' });
        }
        limit = Number(limitRaw);
      }
      const cursorRaw = single('cursor');
      const after = cursorRaw === undefined ? undefined : decodeCursor(cursorRaw);
      const rows = await store.deliveries.page(drain.id, { kind: kindRaw as DeliveryKind | undefined, limit: limit + 1, after });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        deliveries: page.map(deliveryReadForm),
        nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
      };
    },
  );
}

function encodeCursor(d: DeliveryRecord): string {
  return Buffer.from(`${d.startedAt.toISOString()}|${d.id}`, 'utf8').toString('base64url');
}

function decodeCursor(raw: string): { startedAt: Date; id: string } {
  const bad = () => new AppError(400, 'VALIDATION_FAILED', 'cursor is not a cursor this route returned', { field: 'cursor' });
  if (raw.length > 200) throw bad();
  const [ts, id] = Buffer.from(raw, 'base64url').toString('utf8').split('|');
  const startedAt = new Date(ts ?? '');
  if (!id || Number.isNaN(startedAt.getTime()) || !ID_PATTERN.test(id)) throw bad();
  return { startedAt, id };
}

export function deliveryReadForm(d: DeliveryRecord): Record<string, unknown> {
  return {
    id: d.id,
    orgId: d.orgId,
    drainId: d.drainId,
    batchId: d.batchId,
    kind: d.kind,
    attempt: d.attempt,
    recordCount: d.recordCount,
    bytes: d.bytes,
    bytesCompressed: d.bytesCompressed,
    statusCode: d.statusCode,
    latencyMs: d.latencyMs,
    ok: d.ok,
    errorClass: d.errorClass,
    responseExcerpt: d.responseExcerpt,
    scrubHits: d.scrubHits,
    startedAt: d.startedAt.toISOString(),
    expiresAt: d.expiresAt.toISOString(),
    firstRecordId: d.firstRecordId,
    lastRecordId: d.lastRecordId,
  };
}
