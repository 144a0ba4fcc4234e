/** GET .../:drainId/deliveries: attempts of the last seven days, newest first (spec 01 part 4.2). */
import type { FastifyInstance } from 'fastify';
import type { DeliveryKind, DeliveryRecord } from '../../model/delivery.js';
import { drainAccess, DRAINS_BASE, loadDrain, type DrainDeps } from './context.js';
import { decodeCursor, encodeCursor } from '../../api/kernel/pagination.js';
import { schemas, type DeliveriesQuery, type DeliveryRead, type DrainParams } from './schemas.js';

export function registerDeliveryRoutes(app: FastifyInstance, deps: DrainDeps): void {
  const access = drainAccess(deps);
  app.get<{ Params: DrainParams; Querystring: DeliveriesQuery }>(`${DRAINS_BASE}/:drainId/deliveries`, { schema: schemas.deliveries, config: { access } }, async (req) => {
    const drain = await loadDrain(deps.store, req.params);
    const { kind, cursor } = req.query;
    const limit = Number(req.query.limit);
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await deps.store.deliveries.page(drain.id, {
      kind: kind as DeliveryKind | undefined,
      limit: limit + 1,
      after: after && { startedAt: after.at, id: after.id },
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { deliveries: page.map(deliveryReadForm), nextCursor: rows.length > limit && last ? encodeCursor(last.startedAt, last.id) : null };
  });
}

export function deliveryReadForm(d: DeliveryRecord): DeliveryRead {
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
