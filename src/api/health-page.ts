/**
 * The drain health page at /ui/: three static files (ui/ at the repository's root, beside
 * schemas/), read once when the API is built and served as they are. The page holds no data of
 * its own: its script calls the drain routes with the API key the user pastes, under the same
 * access checks as any other client, so serving it is public like /docs.
 *
 * Every answer under /ui/ carries a Content-Security-Policy that admits only the page's own
 * script and style (no inline script, no eval, no other origin, no framing) and Trusted Types
 * (the script writes text nodes, never markup), so data shown on the page (a drain's name, a
 * destination's error excerpt) cannot run as code.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';

/** Where the page's files are: `<root>/ui/`, from src/api/ and from dist/api/ alike. */
const UI_DIR = new URL('../../ui/', import.meta.url);

export const HEALTH_PAGE_PREFIX = '/ui/';

export const HEALTH_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  'trusted-types',
].join('; ');

const FILES = [
  { url: HEALTH_PAGE_PREFIX, file: 'index.html', type: 'text/html; charset=utf-8' },
  { url: `${HEALTH_PAGE_PREFIX}health.js`, file: 'health.js', type: 'text/javascript; charset=utf-8' },
  { url: `${HEALTH_PAGE_PREFIX}health.css`, file: 'health.css', type: 'text/css; charset=utf-8' },
] as const;

function secured(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', HEALTH_PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    // The files change with the deployed version: revalidate instead of keeping a stale script.
    .header('cache-control', 'no-cache');
}

/** Registers the page's routes (public: they carry no data). Reads the files now, so a missing one stops the start. */
export function registerHealthPage(app: FastifyInstance): void {
  const open = { schema: { hide: true }, config: { access: { resource: 'public' as const } } };
  for (const { url, file, type } of FILES) {
    const body = readFileSync(new URL(file, UI_DIR));
    app.get(url, open, async (_req, reply) => secured(reply).type(type).send(body));
  }
  app.get('/ui', open, async (_req, reply) => secured(reply).redirect(HEALTH_PAGE_PREFIX, 301));
}
