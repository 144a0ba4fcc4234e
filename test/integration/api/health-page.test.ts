/**
 * The drain health page (/ui/) in a real browser (the machine's Chromium through playwright-core)
 * against the app delivering to a loopback HTTPS receiver: a key pasted into the page, the drain
 * list, the hourly chart drawn from real deliveries (its points are the read form's), the
 * deliveries table, a pause seen in the list, drops by reason of real deliveries on the chart and
 * in the accounting table, and the replays panel shown only where the route answers. HEALTH_PAGE_SCREENSHOTS=<dir> also saves the screenshots docs/delivery.md shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext, type Page, type Request } from 'playwright-core';
import { createCircuitsRepo } from '../../../src/modules/drains/tables/circuits.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../helpers/app.js';
import { startReceiverApp, type ReceiverApp } from '../../helpers/receiver-app.js';
import { ingest, records } from '../../helpers/records.js';
import { HEALTH_PAGE_CSP } from '../../../src/api/health-page.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = process.env.HEALTH_PAGE_SCREENSHOTS;

describe('the drain health page in a browser', () => {
  let ctx: ReceiverApp;
  let browser: BrowserContext;
  let profile: string;
  let page: Page;
  /** Every request the page sent to the API, with the Authorization header it carried. */
  const sent: { url: string; method: string; authorization: string | undefined }[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    ctx = await startReceiverApp({ RETRY_BASE_MS: '50' });
    profile = mkdtempSync(join(tmpdir(), 'logdrain-ui-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      viewport: { width: 1180, height: 800 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('request', (r: Request) => {
      if (r.url().includes('/admin/')) sent.push({ url: r.url(), method: r.method(), authorization: r.headers().authorization });
    });
    // A CSP violation or a script error is a failure of the page, whatever else it shows.
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('dialog', (d) => {
      problems.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
  });
  afterAll(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await ctx?.stop();
  });

  it('serves the page, its script and its style under a strict Content-Security-Policy, with no inline script', async () => {
    for (const [path, type] of [['/ui/', 'text/html'], ['/ui/health.js', 'text/javascript'], ['/ui/health.css', 'text/css']] as const) {
      const res = await fetch(ctx.app.base + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain(type);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toBe(HEALTH_PAGE_CSP);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      if (type === 'text/html') {
        const html = await res.text();
        // Every script element names a file; none carries code, and no element an inline handler.
        expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script type="module" src="health.js">']);
        expect(html).not.toMatch(/<script[^>]*>[^<]+<\/script>|\son[a-z]+=/i);
      }
    }
    const bare = await fetch(`${ctx.app.base}/ui`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/ui/');
    // The page's data stays behind the drain routes' own checks.
    expect((await fetch(`${ctx.app.base}${ctx.drains}`)).status).toBe(401);
  });

  it('lists the drains, charts the real deliveries, shows the deliveries table, and pauses and resumes a drain', async () => {
    // One drain delivering to the receiver, whose first batch answers 503 (retried, then delivered).
    let failedOnce = false;
    ctx.receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify'] !== undefined || failedOnce || !r.path.startsWith('/orders')) return false;
      failedOnce = true;
      res.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
      return true;
    });
    const drainId = await ctx.verifiedDrain({ name: 'orders', endpoint: `${ctx.receiver.url}/orders` });
    const quietId = await ctx.verifiedDrain({ name: 'audit-archive', endpoint: `${ctx.receiver.url}/archive`, minSeverity: 'error' });
    await ingest(ctx.app, records(40));
    const read = async () => (await ctx.app.request('GET', `${ctx.drains}/${drainId}`, { token: ctx.token })).body;
    await waitFor(async () => (await read()).health.deliveredCount24h === 40, { what: '40 records delivered', timeoutMs: 30_000 });

    await page.goto(`${ctx.app.base}/ui/`);
    expect(await page.isVisible('#signin')).toBe(true);
    expect(await page.isHidden('#session')).toBe(true);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'health-page-signin.png'), clip: { x: 0, y: 0, width: 1180, height: 260 } });
    await page.fill('#org', 'org_acme');
    await page.fill('#key', ctx.token);
    await page.click('#signin-form button[type=submit]');

    // The list: both drains, with their states, and the first one open.
    const row = (id: string) => page.locator(`#drain-rows tr[data-drain-id="${id}"]`);
    await row(drainId).waitFor();
    await expect.poll(() => row(drainId).locator('[data-state]').getAttribute('data-state')).toBe('healthy');
    expect(await row(quietId).locator('td').first().textContent()).toBe('audit-archive');
    expect(await row(drainId).locator('td').nth(4).textContent()).toBe('40');
    await page.locator(`#detail[data-drain-id="${drainId}"]`).waitFor();

    // The chart: 24 points, each the read form's hourly point, and bars drawn for the delivered records.
    const points = await page.locator('#hourly-chart g.hour').evaluateAll((gs) =>
      gs.map((g) => ({
        h: Number(g.getAttribute('data-h')), delivered: Number(g.getAttribute('data-delivered')), dropped: Number(g.getAttribute('data-dropped')), rejected: Number(g.getAttribute('data-rejected')),
        circuitOpenings: Number(g.getAttribute('data-circuit-openings')),
      })));
    const api = await read();
    expect(points).toEqual(api.health.hourly.map(({ h, delivered, dropped, rejected, circuitOpenings }: Record<string, number>) => ({ h, delivered, dropped, rejected, circuitOpenings })));
    expect(points.reduce((n, p) => n + p.delivered, 0)).toBe(40);
    const bars = await page.locator('#hourly-chart rect.bar.delivered').evaluateAll((rs) => rs.map((r) => ({ value: Number(r.getAttribute('data-value')), height: Number(r.getAttribute('height')) })));
    expect(bars.reduce((n, b) => n + b.value, 0)).toBe(40);
    for (const b of bars) expect(b.height).toBeGreaterThan(0);
    expect(await page.textContent('#latency')).toContain(`p50 latency ${Math.round(api.health.p50LatencyMs)} ms`);

    // The deliveries table: the route's rows, newest first, the refused attempt with its error class.
    const deliveries = (await ctx.app.request('GET', `${ctx.drains}/${drainId}/deliveries?limit=20`, { token: ctx.token })).body.deliveries;
    const shown = await page.locator('#delivery-rows tr').evaluateAll((trs) =>
      trs.map((tr) => ({ id: tr.getAttribute('data-delivery-id'), cells: [...tr.querySelectorAll('td')].map((td) => td.textContent) })));
    expect(shown.map((r) => r.id)).toEqual(deliveries.map((d: { id: string }) => d.id));
    const refused = shown.find((r) => r.cells[3] === '503');
    expect(refused?.cells.slice(1, 6)).toEqual(['batch', '1', '503', 'failed', 'http_5xx']);
    expect(shown.some((r) => r.cells[4] === 'ok' && r.cells[1] === 'batch')).toBe(true);
    // No replay yet: the panel says so, with the form to start one.
    expect(await page.isVisible('#replays')).toBe(true);
    expect(await page.isVisible('#replay-empty')).toBe(true);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'health-page-drain.png'), fullPage: true });

    // Pause: the list shows it, and the API agrees.
    await page.click('[data-action=pause]');
    await expect.poll(() => row(drainId).locator('[data-state]').getAttribute('data-state')).toBe('paused');
    expect(await page.textContent('#status')).toContain('Drain paused');
    expect((await read()).state).toBe('paused');
    await expect.poll(() => page.isDisabled('[data-action=pause]')).toBe(true);
    // Resume: degraded until it proves itself.
    await page.click('[data-action=resume]');
    await expect.poll(() => row(drainId).locator('[data-state]').getAttribute('data-state')).toBe('degraded');
    expect((await read()).state).toBe('degraded');

    // A test record goes through the worker and shows in the deliveries once sent.
    await page.click('[data-action=test]');
    await expect.poll(() => page.textContent('#status')).toMatch(/Test record enqueued \(batch [0-9A-Z]{26}\)/);
    await waitFor(async () => {
      await page.click('#refresh');
      await page.locator(`#detail[data-drain-id="${drainId}"]`).waitFor();
      return (await page.locator('#delivery-rows tr td:nth-child(2)').allTextContents()).includes('test');
    }, { what: 'the test delivery listed', timeoutMs: 20_000, intervalMs: 300 });

    // The key went in the Authorization header of every API call, never in a URL, and is kept in
    // this tab's session storage only.
    expect(sent.length).toBeGreaterThan(5);
    for (const r of sent) {
      expect(r.authorization, r.url).toBe(`Bearer ${ctx.token}`);
      expect(r.url).not.toContain(ctx.token);
    }
    expect(page.url()).not.toContain(ctx.token);
    expect(await page.evaluate("sessionStorage.getItem('logdrain.health.key')")).toBe(ctx.token);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    expect(problems).toEqual([]);
  });

  it('starts a replay from the page and shows it complete', async () => {
    const drainId = await ctx.verifiedDrain({ name: 'replayed-orders', endpoint: `${ctx.receiver.url}/replay-page` });
    const sent = records(12);
    await ingest(ctx.app, sent);
    await waitFor(async () => {
      const rows = await ctx.app.store.sql.query<{ n: number }>('select count(*)::int as n from agent_logs where id = any($1::text[])', [sent.map((r) => r.id)]);
      return rows[0]!.n === sent.length;
    }, { what: 'the platform copy written' });
    await page.click('#refresh');
    await page.click(`#drain-rows tr[data-drain-id="${drainId}"] button`);
    await page.locator(`#detail[data-drain-id="${drainId}"]`).waitFor();
    await page.fill('#replay-since', '10m');
    await page.fill('#replay-until', '0s');
    await page.click('#replay-start');
    await expect.poll(() => page.textContent('#status')).toMatch(/Replay rpl_[0-9a-z]{26} requested\./);
    const replayId = /rpl_[0-9a-z]{26}/.exec((await page.textContent('#status')) ?? '')![0];
    await waitFor(async () => {
      await page.click('#refresh');
      await page.locator(`#detail[data-drain-id="${drainId}"]`).waitFor();
      return (await page.locator(`#replay-rows tr[data-replay-id="${replayId}"] .replay-state`).textContent()) === 'completed';
    }, { what: 'the replay shown completed', timeoutMs: 30_000, intervalMs: 300 });
    const api = (await ctx.app.request('GET', `${ctx.drains}/${drainId}/replays/${replayId}`, { token: ctx.token })).body;
    const read = api.progress.recordsRead;
    expect(await page.textContent(`#replay-rows tr[data-replay-id="${replayId}"] .replay-progress`)).toBe(` ${read} / ${api.progress.recordsTotal}`);
    expect(await page.textContent(`#replay-rows tr[data-replay-id="${replayId}"] .replay-sent`)).toBe(String(api.progress.recordsSent));
    expect(api.progress.recordsSent).toBeGreaterThanOrEqual(sent.length);
    expect(await page.locator(`#replay-rows tr[data-replay-id="${replayId}"] button.cancel`).count()).toBe(0);
    // The replayed records reached the destination marked as a replay.
    const replayed = ctx.receiver.accepted().filter((r) => r.path === '/replay-page' && r.headers['logdrain-replay'] === replayId);
    expect(replayed.length).toBeGreaterThan(0);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'health-page-replay.png'), fullPage: true });

    // A window the API refuses is said so, in the API's words.
    await page.fill('#replay-since', 'yesterday');
    await page.click('#replay-start');
    await expect.poll(() => page.textContent('#status')).toMatch(/Could not start the replay: .*since must be an ISO 8601/);
    expect(problems).toEqual([]);
  });

  it('shows the replays panel when the replays route answers, and cancels through it', async () => {
    // Its name is markup: the page shows it as text and runs nothing (no element made, no dialog).
    const hostileName = '<img src=x onerror=alert(1)>';
    const drainId = await ctx.verifiedDrain({ name: hostileName, endpoint: `${ctx.receiver.url}/replayed` });
    const list = `${ctx.drains}/${drainId}/replays`;
    // The replays route is scripted in the browser: the page is checked against the route's contract.
    let state = 'running';
    const cancels: { authorization: string | undefined }[] = [];
    await page.route(`**${list}`, (route) => route.fulfill({
      status: 200, contentType: 'application/json',
      body: JSON.stringify({ replays: [{
        id: 'rpl_1', orgId: 'org_acme', drainId, since: '2026-01-01T00:00:00.000Z', until: '2026-01-02T00:00:00.000Z', status: state,
        progress: { recordsTotal: 480, recordsRead: 120, recordsSent: 100, batchesSent: 4, position: null }, error: null,
        requestedBy: { type: 'api_key', id: 'k' }, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', endedAt: null,
      }], nextCursor: null }),
    }));
    await page.route(`**${list}/rpl_1`, (route) => {
      cancels.push({ authorization: route.request().headers().authorization });
      state = 'cancelled';
      return route.fulfill({ status: 200, contentType: 'application/json', body: '{}' });
    });
    await page.click('#refresh');
    await page.click(`#drain-rows tr[data-drain-id="${drainId}"] button`);
    // The panel may still show the drain the test before opened until this one's detail is loaded.
    await expect.poll(() => page.textContent('#detail-title')).toBe(hostileName);
    await page.locator('#replays:not([hidden]) #replay-rows tr[data-replay-id="rpl_1"]').waitFor();
    expect(await page.locator(`#drain-rows tr[data-drain-id="${drainId}"] td`).first().textContent()).toBe(hostileName);
    expect(await page.locator('#drain-rows img, #detail img').count()).toBe(0);
    const cells = await page.locator('#replay-rows tr[data-replay-id="rpl_1"] td').allTextContents();
    expect(cells.slice(0, 4)).toEqual(['rpl_1', 'running', ' 120 / 480', '100']);
    expect(await page.getAttribute('#replay-rows progress', 'value')).toBe('120');

    await page.click('#replay-rows button.cancel');
    await expect.poll(() => page.textContent('#replay-rows .replay-state')).toBe('cancelled');
    expect(cancels).toEqual([{ authorization: `Bearer ${ctx.token}` }]);
    expect(await page.locator('#replay-rows button.cancel').count()).toBe(0);

    // Without the scripted route the real API answers: this drain has no replay.
    await page.unrouteAll();
    await page.click('#refresh');
    await expect.poll(() => page.isVisible('#replay-empty')).toBe(true);
    expect(problems).toEqual([]);
  });

  it('shows the circuit, throttledUntil, dropped reasons and hourly latencies when the read form carries them', async () => {
    // The real answers are extended in the browser: a circuit with more facts than the read form's word, and fields it does not carry yet.
    const drainId = (await ctx.app.request('GET', ctx.drains, { token: ctx.token })).body.drains[0].id as string;
    const extend = (d: any) => ({
      ...d,
      circuit: { state: 'open', openedAt: '2026-01-01T00:00:00.000Z' },
      throttledUntil: '2026-01-01T00:05:00.000Z',
      health: {
        ...d.health,
        p99LatencyMs: 250,
        hourly: d.health.hourly.map((p: any, i: number) => (i === 23 ? { ...p, dropped: 7, droppedByReason: { quota: 5, sampling: 2 }, p50LatencyMs: 40, p99LatencyMs: 250 } : { ...p, p50LatencyMs: 10, p99LatencyMs: 20 })),
      },
    });
    await page.route(`**${ctx.drains}`, async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      await route.fulfill({ response: res, json: { ...body, drains: body.drains.map(extend) } });
    });
    await page.route(`**${ctx.drains}/${drainId}`, async (route) => {
      const res = await route.fetch();
      await route.fulfill({ response: res, json: extend(await res.json()) });
    });
    await page.click('#refresh');
    await page.click(`#drain-rows tr[data-drain-id="${drainId}"] button`);
    await page.locator('#drain-rows td.circuit').first().waitFor();
    expect(await page.locator('#drain-head th').allTextContents()).toEqual(expect.arrayContaining(['circuit', 'throttled until']));
    expect(await page.textContent(`#drain-rows tr[data-drain-id="${drainId}"] td.circuit`)).toBe('open, opened 2026-01-01 00:00:00 UTC');
    expect(await page.textContent(`#drain-rows tr[data-drain-id="${drainId}"] td.throttled`)).toBe('2026-01-01 00:05:00 UTC');
    await expect.poll(() => page.locator('#hourly-chart rect[data-series="dropped:quota"]').count()).toBe(1);
    expect(await page.getAttribute('#hourly-chart rect[data-series="dropped:quota"]', 'data-value')).toBe('5');
    expect(await page.getAttribute('#hourly-chart rect[data-series="dropped:sampling"]', 'data-value')).toBe('2');
    expect(await page.locator('#latency-chart polyline').count()).toBe(2);
    expect(await page.locator('#latency-chart circle.point').count()).toBe(48);
    expect(await page.locator('#legend li').allTextContents()).toEqual(expect.arrayContaining([' dropped: quota', ' dropped: sampling', ' p50 latency', ' p99 latency']));
    expect(await page.textContent('#latency')).toContain('p99 latency 250 ms');
    await page.unrouteAll();
    await page.click('#refresh');
    // The read form's own: a closed circuit; no drain throttled, so no throttled column.
    await expect.poll(() => page.textContent(`#drain-rows tr[data-drain-id="${drainId}"] td.circuit`)).toBe('closed');
    expect(await page.locator('#drain-rows td.throttled').count()).toBe(0);
    await expect.poll(() => page.locator('#hourly-chart rect[data-series="dropped:quota"]').count()).toBe(0);
    // The real read form's hourly latencies: a line where the drain had attempts today.
    const real = (await ctx.app.request('GET', `${ctx.drains}/${drainId}`, { token: ctx.token })).body;
    expect(await page.locator('#latency-chart').count()).toBe(real.health.hourly.some((p: { p50LatencyMs: number | null }) => p.p50LatencyMs !== null) ? 1 : 0);
    expect(problems).toEqual([]);
  });

  it('charts and tables the drops by reason of real deliveries', async () => {
    // Every batch to /refusing is refused for good (400): its records are dropped, reason permanent.
    ctx.receiver.respondWith((r, res) => {
      if (r.headers['x-svc-verify'] !== undefined || !r.path.startsWith('/refusing')) return false;
      res.writeHead(400, { 'content-type': 'text/plain' }).end('bad request');
      return true;
    });
    const drainId = await ctx.verifiedDrain({ name: 'refusing', endpoint: `${ctx.receiver.url}/refusing`, minSeverity: 'info' });
    // Six info records refused by the destination; three debug records its selectors do not take.
    await ingest(ctx.app, [...records(6, { severity: 'info' }), ...records(3, { severity: 'debug' })]);
    const api = await waitFor(async () => {
      const d = (await ctx.app.request('GET', `${ctx.drains}/${drainId}`, { token: ctx.token })).body;
      const s = d.health.last24h;
      return s.droppedByReason.permanent === 6 && s.droppedByReason.selector === 3 && s.inFlight === 0 ? d : undefined;
    }, { what: 'the drops counted', timeoutMs: 30_000 });
    expect(api.health.last24h).toMatchObject({ seen: 9, delivered: 0, parked: 0 });
    expect(api.health.droppedCount24h).toBe(6);

    await page.click('#refresh');
    await page.click(`#drain-rows tr[data-drain-id="${drainId}"] button`);
    await page.locator(`#detail[data-drain-id="${drainId}"]`).waitFor();
    expect(await page.locator(`#drain-rows tr[data-drain-id="${drainId}"] td`).nth(5).textContent()).toBe('6');
    // The chart: a bar per reason with records, of the read form's values.
    const bars = async (series: string) => (await page.locator(`#hourly-chart rect[data-series="${series}"]`).evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-value'))))).reduce((n, v) => n + v, 0);
    await expect.poll(() => bars('dropped:permanent')).toBe(6);
    expect(await bars('dropped:selector')).toBe(3);
    expect(await page.locator('#hourly-chart rect[data-series="dropped:quota"]').count()).toBe(0);
    expect(await page.locator('#legend li').allTextContents()).toEqual(expect.arrayContaining([' dropped: permanent', ' dropped: selector']));
    // The table: where the day's records went, every reason listed, the sum shown term by term.
    const table = Object.fromEntries(await page.locator('#accounting-rows tr').evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-key'), [tr.querySelector('th')?.textContent, tr.querySelector('td')?.textContent]])));
    expect(table).toEqual({
      seen: ['seen', '9'], delivered: ['delivered', '0'],
      'dropped:dead_letter': ['dropped: dead_letter', '0'], 'dropped:horizon': ['dropped: horizon', '0'], 'dropped:oversize': ['dropped: oversize', '0'],
      'dropped:permanent': ['dropped: permanent', '6'], 'dropped:quota': ['dropped: quota', '0'],
      'dropped:sampling': ['left out: sampling', '0'], 'dropped:selector': ['left out: selector', '3'],
      inFlight: ['in flight', '0'], parked: ['parked', '0'],
    });
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, 'health-page-drops.png'), fullPage: true });
    expect(problems).toEqual([]);
  });

  it('shows an open circuit from the read form, and its closing', async () => {
    const drainId = (await ctx.app.request('GET', ctx.drains, { token: ctx.token })).body.drains[0].id as string;
    const row = `#drain-rows tr[data-drain-id="${drainId}"]`;
    const until = new Date(Date.now() + 3_600_000);
    // Opened as a worker opens it (modules/drains/tables/circuits.ts), for an hour: nothing is sent meanwhile.
    expect(await createCircuitsRepo(ctx.app.store.sql).open(drainId, until.getTime() - Date.now())).toBeDefined();
    const openUntil = (await createCircuitsRepo(ctx.app.store.sql).get(drainId))!.openUntil!.toISOString();
    // The read form's live facts may be a second old: refresh until the page shows it.
    await expect.poll(async () => {
      await page.click('#refresh');
      return page.textContent(`${row} td.circuit`);
    }).toBe('open');
    expect(await page.textContent(`${row} td.throttled`)).toBe(`${openUntil.slice(0, 10)} ${openUntil.slice(11, 19)} UTC`);
    await page.click(`${row} button`);
    await expect.poll(() => page.textContent('#detail')).toContain('circuit open');
    await ctx.app.store.sql.query("update drain_circuits set state = 'closed', open_until = null where drain_id = $1", [drainId]);
    await expect.poll(async () => {
      await page.click('#refresh');
      return page.textContent(`${row} td.circuit`);
    }).toBe('closed');
    expect(await page.locator('#drain-rows td.throttled').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('forgets the key', async () => {
    await page.click('#forget');
    expect(await page.evaluate("sessionStorage.getItem('logdrain.health.key')")).toBeNull();
    expect(await page.isVisible('#signin')).toBe(true);
    expect(await page.isHidden('#drains')).toBe(true);
    expect(await page.isHidden('#session')).toBe(true);
  });
});
