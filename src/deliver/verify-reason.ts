/**
 * Why a verification attempt failed, in words that name the fix: the drain's
 * `verification.reason` (docs/api.md). Used by the verification attempt
 * (verify-attempt.ts).
 */
import type { Drain } from '../model/drain.js';
import { destinationOf } from '../destinations/index.js';
import { transportErrorCodes } from './outcome.js';

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
      return destinationOf(drain.type).verification === 'token-echo'
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
