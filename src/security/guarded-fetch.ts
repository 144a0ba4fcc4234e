/**
 * The SSRF-safe fetcher for customer-supplied URLs (email attachments, and
 * any other outbound GET of a URL a customer names): `https:` only, no
 * credentials in the URL, no private, loopback, link-local or metadata
 * address, checked before connecting (IP literals, blocked names) and at
 * resolution (the guarded lookup: the socket connects to exactly the address
 * it checked), again on every redirect hop; the body is streamed and cut off
 * as soon as it passes the caller's byte budget; the caller's signal bounds
 * the whole time. `allowHosts` exempts hosts for local testing (HTTPS is
 * still required).
 */
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { checkConnectTarget, createGuardedLookup, SSRF_BLOCKED } from './ssrf-guard.js';

export type GuardedFetchResult =
  | { ok: true; body: Buffer; contentType: string | undefined; url: string }
  | { ok: false; reason: 'invalid_url' | 'blocked' | 'too_large' | 'status' | 'timeout' | 'network' | 'redirects'; message: string };

export interface GuardedFetcher {
  /** GET `url`, following at most `maxRedirects` redirects, reading at most `maxBytes` bytes of body. */
  get(url: string, opts: { maxBytes: number; signal: AbortSignal; maxRedirects?: number }): Promise<GuardedFetchResult>;
  close(): Promise<void>;
}

export function createGuardedFetcher(opts: { allowHosts: readonly string[]; extraCaCerts?: string | undefined }): GuardedFetcher {
  const secureContext = opts.extraCaCerts ? createSecureContext({ ca: [...rootCertificates, opts.extraCaCerts] }) : undefined;
  const agent = new Agent({ connect: { ...(secureContext ? { secureContext } : {}), lookup: createGuardedLookup({ allowHosts: opts.allowHosts }) } });

  return {
    async get(raw, { maxBytes, signal, maxRedirects = 5 }) {
      // A signal of this call's own, tied to the caller's only while it runs: undici keeps listening
      // to a request's signal, and an abort after the call would error a body nobody reads any more.
      const own = new AbortController();
      const onAbort = () => own.abort(signal.reason);
      if (signal.aborted) return { ok: false, reason: 'timeout', message: 'the fetch took too long' };
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        return await fetchFollowing(raw, { maxBytes, signal: own.signal, maxRedirects });
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    },
    close: () => agent.close(),
  };

  async function fetchFollowing(raw: string, { maxBytes, signal, maxRedirects }: { maxBytes: number; signal: AbortSignal; maxRedirects: number }): Promise<GuardedFetchResult> {
      let current = raw;
      for (let hop = 0; hop <= maxRedirects; hop++) {
        let url: URL;
        try {
          url = new URL(current);
        } catch {
          return { ok: false, reason: 'invalid_url', message: 'not a valid absolute URL' };
        }
        if (url.protocol !== 'https:') return { ok: false, reason: 'invalid_url', message: 'the URL must use https' };
        if (url.username !== '' || url.password !== '') return { ok: false, reason: 'invalid_url', message: 'the URL must not carry a user name or password' };
        const direct = checkConnectTarget(url.hostname, opts.allowHosts);
        if (!direct.ok) return { ok: false, reason: 'blocked', message: direct.reason };
        let res: Awaited<ReturnType<typeof request>>;
        try {
          res = await request(url, { method: 'GET', dispatcher: agent, signal });
        } catch (e) {
          return failure(e, signal);
        }
        if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location !== undefined) {
          discard(res.body);
          const location = Array.isArray(res.headers.location) ? res.headers.location[0]! : res.headers.location;
          current = new URL(location, url).toString();
          continue;
        }
        if (res.statusCode < 200 || res.statusCode >= 300) {
          discard(res.body);
          return { ok: false, reason: 'status', message: `the server answered ${res.statusCode}` };
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          discard(res.body);
          return { ok: false, reason: 'too_large', message: `the body is over ${maxBytes} bytes` };
        }
        const chunks: Buffer[] = [];
        let size = 0;
        try {
          for await (const chunk of res.body) {
            size += (chunk as Buffer).length;
            if (size > maxBytes) {
              discard(res.body);
              return { ok: false, reason: 'too_large', message: `the body is over ${maxBytes} bytes` };
            }
            chunks.push(chunk as Buffer);
          }
        } catch (e) {
          return failure(e, signal);
        }
        const type = res.headers['content-type'];
        return { ok: true, body: Buffer.concat(chunks, size), contentType: Array.isArray(type) ? type[0] : type, url: url.toString() };
      }
      return { ok: false, reason: 'redirects', message: `more than ${maxRedirects} redirects` };
  }
}

/** Drops a response body unread; its later errors (an abort) have nobody to reach. */
function discard(body: { on(event: 'error', fn: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}

function failure(e: unknown, signal: AbortSignal): GuardedFetchResult {
  if (signal.aborted) return { ok: false, reason: 'timeout', message: 'the fetch took too long' };
  const err = e as { code?: string; cause?: { code?: string; message?: string }; message?: string };
  const blocked = err.code === SSRF_BLOCKED ? err : err.cause?.code === SSRF_BLOCKED ? err.cause : undefined;
  if (blocked) return { ok: false, reason: 'blocked', message: blocked.message ?? 'the destination is not public' };
  return { ok: false, reason: 'network', message: 'the server could not be reached' };
}
