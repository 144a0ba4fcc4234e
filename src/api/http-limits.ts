/**
 * The API server's time limits. A request must arrive whole within `requestTimeoutMs`: a body
 * trickled a byte at a time would otherwise hold its socket (and descriptor) for ever. Node checks
 * it every connectionsCheckingInterval, and enforces it only when headersTimeout is not longer.
 */
export function httpLimits(requestTimeoutMs: number): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  return {
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(60_000, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(requestTimeoutMs / 4))),
  };
}
