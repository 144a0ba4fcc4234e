/**
 * GET /admin/orgs/:orgId/log-drains-audit: the organization's drain audit
 * entries, newest first (our design; spec 01 part 6 fixes what an entry may
 * hold). Query: `drainId`, `action`, `limit` (1-100, default 20), `cursor`.
 */
import type { FastifyInstance } from 'fastify';
import { drainAccess, type DrainDeps, type OrgParams } from './context.js';
import { RESOURCE_ID } from '../../api/kernel/access.js';
import { decodeCursor, encodeCursor, parseLimit, single } from '../../api/kernel/pagination.js';
import { schemas } from './schemas.js';
import { KernelErrors } from '../../api/kernel/error-registry.js';

export const AUDIT_ACTIONS = [
  'logs.drain.created', 'logs.drain.updated', 'logs.drain.deleted', 'logs.drain.paused', 'logs.drain.resumed',
  'logs.drain.verified', 'logs.drain.secret_rotated', 'logs.drain.test_sent', 'logs.drain.quota_paused',
] as const;

export function registerAuditRoutes(app: FastifyInstance, deps: DrainDeps): void {
  const access = drainAccess(deps);
  app.get<{ Params: OrgParams; Querystring: Record<string, unknown> }>('/admin/orgs/:orgId/log-drains-audit', { schema: schemas.audit, config: { access } }, async (req, reply) => {
    const action = single(req.query, 'action');
    if (action !== undefined && !(AUDIT_ACTIONS as readonly string[]).includes(action)) {
      const message = `action must be one of ${AUDIT_ACTIONS.join(', ')}`;
      throw KernelErrors.VALIDATION_FAILED(message, { field: 'action', message: [message] });
    }
    const drainId = single(req.query, 'drainId');
    if (drainId !== undefined && !RESOURCE_ID.test(drainId)) {
      throw KernelErrors.VALIDATION_FAILED('drainId is malformed', { field: 'drainId', message: ['drainId is malformed'] });
    }
    const limit = parseLimit(single(req.query, 'limit'), 20, 100);
    const cursor = single(req.query, 'cursor');
    const rows = await deps.store.audit.page(req.params.orgId, { action, targetId: drainId, limit: limit + 1, after: cursor === undefined ? undefined : decodeCursor(cursor) });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      entries: page.map((e) => ({ id: e.id, action: e.action, actor: e.actor, drainId: e.targetId, details: e.details, at: e.at.toISOString() })),
      nextCursor: rows.length > limit && last ? encodeCursor(last.at, last.id) : null,
    };
  });
}
