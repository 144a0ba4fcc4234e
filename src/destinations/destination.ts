/**
 * What a drain type decides, one file a type (http.ts, otlp.ts, vendor-a.ts,
 * vendor-b.ts) listed once in index.ts: where its endpoint comes from and which
 * hosts it may name, whether the drain's `format` applies, the encoding its
 * batches take, whether they are signed, and what passes verification. The REST
 * family and the engine both ask this table instead of naming types. A table of
 * facts, below every engine stage: it imports nothing.
 */

/** The deployment's settings a destination's endpoint rules read (the validated config's). */
export interface EndpointSettings {
  /** VENDOR_A_INTAKE_URL: the intake URL with `{site}` in it. */
  readonly vendorAIntakeUrl: string;
  /** VENDOR_B_HOSTS: intake hosts (a leading dot: any host under it). */
  readonly vendorBHosts: readonly string[];
}

/** Where a drain's endpoint comes from. */
export type EndpointRule =
  /** Given in the body (HTTPS, public); `intakeHosts`, when set, are the only hosts it may name besides the deployment's allow list. */
  | { readonly from: 'body'; readonly intakeHosts?: (s: EndpointSettings) => readonly string[] }
  /** Derived from the drain's `site`, which is required; the body may not give one. */
  | { readonly from: 'site'; readonly url: (s: EndpointSettings, site: string) => string };

/** The body encodings (src/encode/): plan/drain-plans.ts maps each to its encoder. */
export type EncodingName = 'json' | 'ndjson' | 'otlp-protobuf' | 'vendor-a-logs' | 'vendor-b-logs';

export interface Destination<T extends string = string> {
  readonly type: T;
  readonly endpoint: EndpointRule;
  /** Whether the drain's `format` (json or ndjson) applies; other types keep `json` and ignore it. */
  readonly formats: boolean;
  /** The encoding of the drain's batches, given its `format` (honoured only where `formats`). */
  encoding(format: 'json' | 'ndjson'): EncodingName;
  /**
   * Batches (and verifications) carry Standard Webhooks signatures made with the drain's secret:
   * only such a drain has a secret, may be given one, and rotates it.
   */
  readonly signs: boolean;
  /**
   * What passes ownership verification: `token-echo`, a 2xx whose body is the token sent in
   * `X-Svc-Verify` (surrounding whitespace ignored); `any-2xx`, any 2xx from the intake.
   */
  readonly verification: 'token-echo' | 'any-2xx';
}
