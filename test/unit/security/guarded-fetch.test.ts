/**
 * A business website read for the persona enhance route through the guarded fetcher: public HTTPS
 * only, each redirect hop checked, bounded in size, time and hops. `localhost` is allow-listed (as
 * WEBSITE_FETCH_ALLOW_HOSTS would) so a local HTTPS server stands in for a public site; 127.0.0.1
 * is not, and stands for a private address.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGuardedFetcher, type GuardedFetcher } from '../../../src/security/guarded-fetch.js';
import { readWebsite, textOfHtml } from '../../../src/modules/persona/website.js';
import { startReceiver, type HttpsReceiver } from '../../helpers/receiver.js';

const BOUNDS = { maxBytes: 1000, timeoutMs: 500, maxRedirects: 2 } as const;

describe('reading a website through the guarded fetcher', () => {
  let site: HttpsReceiver;
  let fetcher: GuardedFetcher;
  beforeAll(async () => {
    site = await startReceiver();
    fetcher = createGuardedFetcher({ allowHosts: ['localhost'], extraCaCerts: site.ca });
  });
  afterAll(async () => {
    await fetcher?.close();
    await site?.close();
  });
  beforeEach(() => site.respondWith(undefined));
  const read = (url: string) => readWebsite(fetcher, url, BOUNDS);

  it('reads an HTML page\'s text, and refuses one over the size bound', async () => {
    site.respondWith((r, res) => {
      if (r.path === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000));
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<h1>Fresh bread</h1><script>x()</script>');
      return true;
    });
    expect(await read(`${site.url}/`)).toEqual({ ok: true, text: 'Fresh bread' });
    expect(await read(`${site.url}/big`)).toEqual({ ok: false, reason: 'the body is over 1000 bytes' });
  });

  it('follows redirects between allowed hosts, at most maxRedirects of them', async () => {
    site.respondWith((r, res) => {
      const n = Number(r.path.slice(1));
      if (n < 5) res.writeHead(302, { location: `/${n + 1}` }).end();
      else res.writeHead(200).end('arrived');
      return true;
    });
    expect(await read(`${site.url}/3`)).toEqual({ ok: true, text: 'arrived' });
    expect(await read(`${site.url}/0`)).toEqual({ ok: false, reason: 'more than 2 redirects' });
  });

  it('refuses http, credentials, private addresses and a redirect to one', async () => {
    for (const url of ['http://localhost/', 'https://u:p@localhost/', `https://127.0.0.1:${site.port}/`, 'https://10.0.0.1/', 'https://metadata.google.internal/']) {
      expect((await read(url)).ok, url).toBe(false);
    }
    const before = site.requests.length;
    site.respondWith((_r, res) => {
      res.writeHead(301, { location: `https://127.0.0.1:${site.port}/x` }).end();
      return true;
    });
    expect(await read(`${site.url}/`)).toEqual({ ok: false, reason: `Destination address 127.0.0.1 is a loopback address.` });
    // The first hop only: the redirect's target was never asked.
    expect(site.requests.length).toBe(before + 1);
  });

  it('gives up on a page that does not answer in time', async () => {
    site.respondWith(() => true);
    const started = Date.now();
    expect(await read(`${site.url}/slow`)).toEqual({ ok: false, reason: 'it did not answer within 500 ms' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('reads the text of an HTML page without its scripts, styles and tags', () => {
    expect(textOfHtml('<html><style>p{}</style><script>x()</script><p>Hi &amp; <b>welcome</b></p></html>')).toBe('Hi & welcome');
  });
});
