/**
 * Bounds on every field of an agent execution record, in UTF-8 bytes: one
 * table shared by the Kafka decoder, the ingest route (which runs the same
 * decoder) and dead-lettering. The ids end up in the platform copy's btree
 * keys, where Postgres refuses an index row over about 2,700 bytes ("index
 * row requires N bytes"): an unbounded id failed every write it was part of,
 * so the bounds keep the widest key (org, agent, time, id) far below that.
 * docs/limits.md lists them for users.
 */
export const RECORD_LIMITS = {
  /** A whole message: a record is a log line, not a payload channel. */
  recordBytes: 256 * 1024,
  id: 256,
  orgId: 128,
  agentId: 128,
  agentName: 256,
  agentVersion: 128,
  executionId: 256,
  source: 64,
  event: 64,
  /** Attribute keys, and how many attributes a record carries. */
  attributeKey: 256,
  attributes: 256,
  /** Fields a record does not define: how deep their values may nest. */
  fieldDepth: 32,
  /** Dead-letter rows keep this much of a refused message and of the reason. */
  deadLetterPayload: 4096,
  deadLetterReason: 1024,
} as const;

/** The bounded string fields, checked in this order. */
export const BOUNDED_STRING_FIELDS = ['id', 'orgId', 'agentId', 'agentName', 'agentVersion', 'executionId', 'source', 'event'] as const;

/** UTF-8 length without encoding when the UTF-16 length already settles it (at most 3 bytes per unit). */
export function utf8Over(text: string, maxBytes: number): boolean {
  if (text.length * 3 <= maxBytes) return false;
  if (text.length > maxBytes) return true;
  return Buffer.byteLength(text) > maxBytes;
}
