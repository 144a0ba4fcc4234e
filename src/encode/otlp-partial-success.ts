/**
 * Reads an OTLP ExportLogsServiceResponse for its partial success: the
 * number of log records the destination refused (spec 01 part 4.2). The
 * answer may be protobuf or JSON (OTLP/HTTP allows both). Never throws:
 * anything unreadable counts as no refusal.
 */
import protobuf from 'protobufjs/minimal.js';

const { Reader } = protobuf;

export function rejectedLogRecords(body: Buffer, contentType: string | undefined): number {
  if (body.length === 0) return 0;
  try {
    if (contentType?.includes('json')) {
      const parsed = JSON.parse(body.toString('utf8')) as { partialSuccess?: { rejectedLogRecords?: string | number } };
      const n = Number(parsed?.partialSuccess?.rejectedLogRecords ?? 0);
      return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
    }
    return fromProtobuf(body);
  } catch {
    return 0;
  }
}

function fromProtobuf(body: Buffer): number {
  const outer = Reader.create(body);
  while (outer.pos < outer.len) {
    const tag = outer.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 2) {
      // partial_success: ExportLogsPartialSuccess { rejected_log_records = 1 (int64), error_message = 2 }
      const inner = Reader.create(outer.bytes());
      while (inner.pos < inner.len) {
        const t = inner.uint32();
        if (t >>> 3 === 1 && (t & 7) === 0) {
          const v = inner.int64() as unknown as number | { toNumber(): number };
          const n = typeof v === 'number' ? v : v.toNumber();
          return n > 0 ? n : 0;
        }
        inner.skipType(t & 7);
      }
      return 0;
    }
    outer.skipType(tag & 7);
  }
  return 0;
}
