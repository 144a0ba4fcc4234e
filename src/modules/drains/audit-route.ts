/**
 * GET /admin/orgs/:orgId/log-drains-audit: the organization's drain audit
 * entries (no other family's), newest first (our design; spec 01 part 6
 * fixes what an entry may hold). Query: `drainId`, `action`, `limit` (1-100,
 * default 20), `cursor`.
 */
import type { FastifyInstance } from 'fastify';
import { drainAccess, type DrainDeps } from './context.js';
import { decodeCursor, encodeCursor } from '../../api/kernel/pagination.js';
import { schemas, type AuditQuery, type OrgParams } from './schemas.js';
import { DRAIN_TARGET } from '../../audit/drain-audit.js';

export function registerAuditRoutes(app: FastifyInstance, deps: DrainDeps): void {
  const access = drainAccess(deps);
  app.get<{ Params: OrgParams; Querystring: AuditQuery }>('/admin/orgs/:orgId/log-drains-audit', { schema: schemas.audit, config: { access } }, async (req) => {
    const { action, drainId, cursor } = req.query;
    const limit = Number(req.query.limit);
    // Drain entries only: the organization's log holds every family's entries.
    const rows = await deps.store.audit.page(req.params.orgId, {
      targetType: DRAIN_TARGET, action, targetId: drainId, limit: limit + 1, after: cursor === undefined ? undefined : decodeCursor(cursor),
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      entries: page.map((e) => ({ id: e.id, action: e.action, actor: e.actor, drainId: e.targetId, details: e.details, at: e.at.toISOString() })),
      nextCursor: rows.length > limit && last ? encodeCursor(last.at, last.id) : null,
    };
  });
}
