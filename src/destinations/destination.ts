/**
 * What a drain type decides about delivery, one file a type (http.ts,
 * otlp.ts, vendor-a.ts, vendor-b.ts) listed once in index.ts: the encoding
 * its batches take, whether they are signed, and what passes verification.
 * A table of facts, below every engine stage: it imports nothing.
 */

/** The body encodings (src/encode/): plan/drain-plans.ts maps each to its encoder. */
export type EncodingName = 'json' | 'ndjson' | 'otlp-protobuf' | 'vendor-a-logs' | 'vendor-b-logs';

export interface Destination<T extends string = string> {
  readonly type: T;
  /** The encoding of the drain's batches, given its `format` (only http honours it). */
  encoding(format: 'json' | 'ndjson'): EncodingName;
  /** Batches (and verifications) carry Standard Webhooks signatures made with the drain's secret. */
  readonly signs: boolean;
  /**
   * What passes ownership verification: `token-echo`, a 2xx whose body is the token sent in
   * `X-Svc-Verify` (surrounding whitespace ignored); `any-2xx`, any 2xx from the intake.
   */
  readonly verification: 'token-echo' | 'any-2xx';
}
