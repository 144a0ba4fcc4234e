/**
 * A fetcher for pages at customer-supplied URLs (a business website to learn
 * from): public HTTPS only, every hop checked. Each URL, the first and every
 * redirect's target, passes the SSRF guard's creation-time check
 * (`checkEndpoint`: https, no credentials, a public address) before it is
 * asked for, and every connection is opened through the guarded lookup, so a
 * name that resolves to a private address by the time it is dialled is
 * refused too. The whole fetch (every hop) is bounded in time, the body read
 * is bounded in size (the rest is not read), and the redirects in number.
 */
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { checkConnectTarget, checkEndpoint, createGuardedLookup, type Resolver } from './ssrf-guard.js';

export interface GuardedFetcherOptions {
  /** Hosts exempt from the address checks (local testing); HTTPS is still required. */
  allowHosts: readonly string[];
  /** A CA bundle trusted beside the system roots (NODE_EXTRA_CA_CERTS). */
  extraCaCerts?: string | undefined;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** Resolves names for the first check (tests); the connect-time lookup always asks DNS. */
  resolve?: Resolver;
}

export type FetchedPage =
  | { ok: true; url: string; status: number; contentType: string; body: string; truncated: boolean }
  | { ok: false; reason: string };

export interface GuardedFetcher {
  fetchText(url: string): Promise<FetchedPage>;
  close(): Promise<void>;
}

export function createGuardedFetcher(opts: GuardedFetcherOptions): GuardedFetcher {
  const secureContext = opts.extraCaCerts ? createSecureContext({ ca: [...rootCertificates, opts.extraCaCerts] }) : undefined;
  const agent = new Agent({
    connect: { ...(secureContext ? { secureContext } : {}), lookup: createGuardedLookup({ allowHosts: opts.allowHosts }) },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  return {
    async fetchText(first) {
      const signal = AbortSignal.timeout(opts.timeoutMs);
      let url = first;
      for (let hop = 0; hop <= opts.maxRedirects; hop++) {
        const check = await checkEndpoint(url, { allowHosts: opts.allowHosts, ...(opts.resolve ? { resolve: opts.resolve } : {}) });
        if (!check.ok) return { ok: false, reason: hop === 0 ? check.reason : `A redirect led to a refused destination: ${check.reason}` };
        const direct = checkConnectTarget(check.url.hostname, opts.allowHosts);
        if (!direct.ok) return { ok: false, reason: direct.reason };
        let res: Awaited<ReturnType<typeof request>>;
        try {
          res = await request(check.url, { method: 'GET', dispatcher: agent, signal, headers: { accept: 'text/html, text/plain;q=0.9, */*;q=0.1', 'user-agent': 'logdrain-persona/1' } });
        } catch (e) {
          const err = e as { name?: string; code?: string };
          if (err.name === 'TimeoutError' || err.name === 'AbortError') return { ok: false, reason: `The website did not answer within ${opts.timeoutMs} ms.` };
          if (err.code === 'ERR_SSRF_BLOCKED') return { ok: false, reason: (e as Error).message };
          return { ok: false, reason: 'The website could not be reached.' };
        }
        // The deadline may fire after the body was left (a redirect, the size bound): its abort then
        // errors the body stream, which nobody reads any more.
        res.body.on('error', () => {});
        const location = res.headers.location;
        if (res.statusCode >= 300 && res.statusCode < 400 && location !== undefined) {
          await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
          try {
            url = new URL(Array.isArray(location) ? location[0]! : location, check.url).toString();
          } catch {
            return { ok: false, reason: 'The website redirected to an invalid URL.' };
          }
          continue;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        try {
          for await (const chunk of res.body) {
            const b = chunk as Buffer;
            const room = opts.maxBytes - size;
            chunks.push(b.length > room ? b.subarray(0, room) : b);
            size += Math.min(b.length, room);
            if (size >= opts.maxBytes) {
              truncated = true;
              res.body.destroy();
              break;
            }
          }
        } catch {
          return { ok: false, reason: `The website's answer was not received within ${opts.timeoutMs} ms.` };
        }
        const type = res.headers['content-type'];
        return { ok: true, url: check.url.toString(), status: res.statusCode, contentType: (Array.isArray(type) ? type[0] : type) ?? '', body: Buffer.concat(chunks).toString('utf8'), truncated };
      }
      return { ok: false, reason: `The website redirected more than ${opts.maxRedirects} times.` };
    },
    close: () => agent.close(),
  };
}

/** The readable text of an HTML page (scripts, styles and tags left out, entities of the common few decoded). */
export function textOfHtml(html: string): string {
  return html
    .replace(/<(script|style|noscript)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
