/**
 * Reading a business website for `enhance/website` with a real model provider: through the
 * SSRF-safe fetcher (src/security/guarded-fetch.ts: public HTTPS only, every redirect hop
 * checked), bounded in size, time and hops; the page's readable text is what the model gets.
 */
import type { GuardedFetcher } from '../../security/guarded-fetch.js';

/** A business website is read at most this much, this fast, over this many redirects. */
export interface WebsiteBounds {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}
export const WEBSITE_FETCH: WebsiteBounds = { maxBytes: 2 * 1_048_576, timeoutMs: 10_000, maxRedirects: 5 };

export type WebsiteText = { ok: true; text: string } | { ok: false; reason: string };

export async function readWebsite(fetcher: GuardedFetcher, url: string, bounds: WebsiteBounds = WEBSITE_FETCH): Promise<WebsiteText> {
  const page = await fetcher.get(url, { maxBytes: bounds.maxBytes, signal: AbortSignal.timeout(bounds.timeoutMs), maxRedirects: bounds.maxRedirects });
  if (!page.ok) return { ok: false, reason: page.reason === 'timeout' ? `it did not answer within ${bounds.timeoutMs} ms` : page.message };
  const body = page.body.toString('utf8');
  return { ok: true, text: /html/i.test(page.contentType ?? '') ? textOfHtml(body) : body };
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
