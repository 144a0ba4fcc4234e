/**
 * The guarded page fetcher: public HTTPS only, each redirect hop checked, bounded in size, time and
 * hops. `localhost` is allow-listed (as WEBSITE_FETCH_ALLOW_HOSTS would) so a local HTTPS server
 * stands in for a public site; 127.0.0.1 is not, and stands for a private address.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedFetcher, textOfHtml, type GuardedFetcher } from '../../../src/security/guarded-fetch.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';

describe('guarded page fetcher', () => {
  let site: HttpsReceiver;
  let fetcher: GuardedFetcher;
  beforeAll(async () => {
    site = await startReceiver();
    fetcher = createGuardedFetcher({ allowHosts: ['localhost'], extraCaCerts: site.ca, timeoutMs: 500, maxBytes: 1000, maxRedirects: 2 });
  });
  afterAll(async () => {
    await fetcher?.close();
    await site?.close();
  });
  beforeEach(() => site.respondWith(undefined));

  it('reads a page, at most maxBytes of it', async () => {
    site.respondWith((_r, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000));
      return true;
    });
    const page = await fetcher.fetchText(`${site.url}/big`);
    expect(page).toMatchObject({ ok: true, status: 200, contentType: 'text/plain', truncated: true });
    expect(page.ok && page.body.length).toBe(1000);
  });

  it('follows redirects between allowed hosts, at most maxRedirects of them', async () => {
    site.respondWith((r, res) => {
      const n = Number(r.path.slice(1));
      if (n < 5) res.writeHead(302, { location: `/${n + 1}` }).end();
      else res.writeHead(200).end('arrived');
      return true;
    });
    expect(await fetcher.fetchText(`${site.url}/3`)).toMatchObject({ ok: true, body: 'arrived', url: `${site.url}/5` });
    expect(await fetcher.fetchText(`${site.url}/0`)).toEqual({ ok: false, reason: 'The website redirected more than 2 times.' });
  });

  it('refuses http, credentials, private addresses and a redirect to one', async () => {
    for (const url of ['http://localhost/', 'https://u:p@localhost/', `https://127.0.0.1:${site.port}/`, 'https://10.0.0.1/', 'https://metadata.google.internal/']) {
      expect((await fetcher.fetchText(url)).ok, url).toBe(false);
    }
    site.respondWith((_r, res) => {
      res.writeHead(301, { location: `https://127.0.0.1:${site.port}/x` }).end();
      return true;
    });
    const hop = await fetcher.fetchText(`${site.url}/`);
    expect(hop.ok).toBe(false);
    expect(!hop.ok && hop.reason).toMatch(/^A redirect led to a refused destination: Destination address 127\.0\.0\.1 is a loopback address\.$/);
  });

  it('gives up on a page that does not answer in time', async () => {
    site.respondWith(() => true);
    const started = Date.now();
    expect(await fetcher.fetchText(`${site.url}/slow`)).toEqual({ ok: false, reason: 'The website did not answer within 500 ms.' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('reads the text of an HTML page without its scripts, styles and tags', () => {
    expect(textOfHtml('<html><style>p{}</style><script>x()</script><p>Hi &amp; <b>welcome</b></p></html>')).toBe('Hi & welcome');
  });
});
