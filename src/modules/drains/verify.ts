/**
 * Ownership verification (CONTRACT part 5). For `http`: a POST carrying a
 * single-use token in `X-Svc-Verify`; it passes when the destination answers
 * 2xx with the token, trimmed, as its body. Vendor types pass on any 2xx from
 * the intake. The outcome lands in the drain's `verification` and in a
 * `verify` delivery record; success moves `pending_verification` to `healthy`.
 */
import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import type { Drain } from '../../model/drain.js';
import type { Store } from '../../store/store.js';
import { noteDrainActivity } from '../../store/change-epochs.js';
import type { Transport } from '../../deliver/transport.js';
import { classifyTransportError, transportErrorCodes } from '../../deliver/outcome.js';
import { signBatch, signingKey } from '../../sign/standard-webhooks.js';
import { DELIVERY_RETENTION_MS } from '../../model/delivery.js';
import { hashToken } from '../../security/token-hash.js';
import { scrubExcerpt } from '../../shape/builtin-scrub.js';
import { USER_AGENT } from '../../deliver/deliverer.js';
import type { Logger } from '../../telemetry/logger.js';
import type { Actor } from '../../audit/drain-audit.js';
import { auditDrain } from '../../audit/drain-audit.js';
import { nextState } from '../../model/drain-lifecycle.js';

export const VERIFY_TOKEN_TTL_MS = 10 * 60_000;

export interface StartedVerification {
  verificationId: string;
  token: string;
  expiresAt: Date;
}

export async function startVerification(store: Store, drain: Drain, now = new Date()): Promise<StartedVerification> {
  const token = randomBytes(24).toString('base64url');
  const v = { verificationId: ulid(), token, expiresAt: new Date(now.getTime() + VERIFY_TOKEN_TTL_MS) };
  await store.verifications.insert({
    id: v.verificationId, drainId: drain.id, tokenHash: hashToken(token), createdAt: now, expiresAt: v.expiresAt,
  });
  return v;
}

export async function runVerification(deps: {
  store: Store;
  transport: Transport;
  logger: Logger;
  drain: Drain;
  verification: StartedVerification;
  actor: Actor;
}): Promise<boolean> {
  const { store, transport, drain, verification } = deps;
  // Single use: a token is spent by its one attempt, and not at all once expired.
  if (!(await store.verifications.consume(verification.verificationId))) return false;
  const body = Buffer.from(JSON.stringify({ type: 'svc.drain.verify', drainId: drain.id, verificationId: verification.verificationId }));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-svc-verify': verification.token,
  };
  const headerValues: string[] = [verification.token];
  for (const h of drain.headers) {
    const value = store.secretBox.open(h.value);
    headers[h.name.toLowerCase()] = value;
    headerValues.push(value);
  }
  if (drain.type === 'http' && drain.secret) {
    Object.assign(headers, signBatch([signingKey(store.secretBox.open(drain.secret))], verification.verificationId, body));
  }
  const startedAt = new Date();
  const result = await transport.post({ url: drain.endpoint ?? '', headers, body });
  let ok = false;
  let statusCode: number | undefined;
  let errorClass: string | undefined;
  let excerpt: string | undefined;
  if (result.kind === 'response') {
    statusCode = result.statusCode;
    const text = result.body.toString('utf8');
    const is2xx = statusCode >= 200 && statusCode < 300;
    ok = is2xx && (drain.type !== 'http' || text.trim() === verification.token);
    if (!ok) errorClass = is2xx ? 'verify_mismatch' : statusCode >= 500 ? 'http_5xx' : statusCode >= 400 ? 'http_4xx' : 'http_3xx';
    if (text.length > 0) excerpt = scrubExcerpt(text.slice(0, 1024), headerValues).slice(0, 1024);
  } else {
    errorClass = classifyTransportError(result.error);
  }
  let reason = ok ? undefined : failureReason(drain, errorClass ?? 'connect', statusCode, result.kind === 'error' ? result.error : undefined);
  await store.deliveries.insertMany([{
    id: ulid(), orgId: drain.orgId, drainId: drain.id, batchId: verification.verificationId, kind: 'verify', attempt: 1,
    statusCode, latencyMs: result.latencyMs, ok, errorClass, responseExcerpt: excerpt, startedAt,
    expiresAt: new Date(startedAt.getTime() + DELIVERY_RETENTION_MS),
  }]);
  noteDrainActivity();
  const current = await store.drains.get(drain.orgId, drain.id);
  if (!current) return false;
  // The attempt proved the endpoint it went to: if the drain moved meanwhile, it proves nothing for it.
  if (ok && current.endpoint !== drain.endpoint) {
    ok = false;
    errorClass = 'endpoint_changed';
    reason = 'The drain\'s endpoint changed while this attempt was under way; verify the new endpoint.';
  }
  const outcome = {
    attemptedAt: startedAt.toISOString(), outcome: ok ? 'ok' : 'failed', statusCode, latencyMs: result.latencyMs,
    ...(ok && drain.endpoint !== null ? { endpoint: drain.endpoint } : {}),
    ...(ok ? {} : { errorClass, reason }),
  };
  // A drain waiting for verification starts delivering; any other keeps its state (drain-lifecycle.ts).
  const verified = ok ? nextState(current, 'verified') : undefined;
  // The outcome and, on success, its audit entry commit together.
  await store.unitOfWork(async (tx) => {
    const updated = await tx.drains.update(
      drain.orgId,
      drain.id,
      ok
        ? { verification: outcome, verifiedAt: startedAt, ...(verified ? { state: verified.state } : {}) }
        : { verification: outcome },
      false,
    );
    if (ok && updated) {
      await auditDrain(tx, deps.actor, 'logs.drain.verified', updated, { state: updated.state });
    }
  });
  deps.logger.info({ event: 'drain.verified', drainId: drain.id, ok, statusCode, errorClass }, 'verification attempt finished');
  return ok;
}

/** TLS failures meaning "this certificate's issuer is not one Node trusts": self-signed, or a private CA. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
]);

/**
 * Why a verification attempt failed, in words that name the fix (the drain's `verification.reason`).
 * Built from the error's code and the answer's status, never from the destination's text, and
 * never naming an address the host resolved to.
 */
export function failureReason(drain: Pick<Drain, 'type' | 'endpoint'>, errorClass: string, statusCode: number | undefined, error: unknown): string {
  let where = 'the destination';
  try {
    if (drain.endpoint) where = new URL(drain.endpoint).host;
  } catch {
    /* an endpoint the API accepted parses */
  }
  const codes = transportErrorCodes(error);
  const code = codes.find((c) => !c.startsWith('UND_ERR_')) ?? codes[0];
  switch (errorClass) {
    case 'verify_mismatch':
      return `The destination answered HTTP ${statusCode}, but its response body did not equal the token sent in the X-Svc-Verify header; it must answer with the token (surrounding whitespace is ignored) as its whole body.`;
    case 'http_3xx':
      return `The destination answered HTTP ${statusCode} (a redirect); redirects are not followed: use the final URL as the endpoint.`;
    case 'http_4xx':
    case 'http_5xx':
      return drain.type === 'http'
        ? `The destination answered HTTP ${statusCode}; verification needs a 2xx answer whose body is the X-Svc-Verify token.`
        : `The intake answered HTTP ${statusCode}; verification needs a 2xx answer (check the drain's headers, such as its API key).`;
    case 'tls':
      if (code && UNTRUSTED.has(code)) {
        return `The TLS certificate of ${where} was not trusted (${code}). If it is self-signed or from a private CA, start logdrain with NODE_EXTRA_CA_CERTS set to the path of that CA certificate (PEM).`;
      }
      if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `The TLS certificate of ${where} does not name that host (${code}).`;
      if (code === 'CERT_HAS_EXPIRED') return `The TLS certificate of ${where} has expired (${code}).`;
      return `The TLS handshake with ${where} failed${code ? ` (${code})` : ''}.`;
    case 'connect':
      if (code === 'ECONNREFUSED') return `Connection refused by ${where}: nothing accepts connections there (check the host and port, and that the destination is running).`;
      if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return `${where} closed the connection before answering${code ? ` (${code})` : ''}.`;
      if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `${where} could not be reached (${code}).`;
      return `Could not connect to ${where}${code ? ` (${code})` : ''}.`;
    case 'timeout':
      return `${where} did not answer in time (DELIVERY_TIMEOUT_MS); a verification answer must arrive within it.`;
    case 'dns':
      return `The host name of ${where} did not resolve${code ? ` (${code})` : ''}.`;
    case 'ssrf':
      return `${where} resolved to a private, loopback, link-local or metadata address, which deliveries never reach. For local testing, the operator can exempt the host with DRAIN_ENDPOINT_ALLOW_HOSTS (HTTPS is still required).`;
    default:
      return `The attempt failed (${errorClass}).`;
  }
}
