// The drain health page: reads the drain routes with the key the user pasted and draws what they
// answer. Everything shown is written as text nodes or SVG attributes (never as markup), and the
// key lives in this tab's session storage only, sent in the Authorization header.

const STORE = window.sessionStorage;
const KEY_ITEM = 'logdrain.health.key';
const ORG_ITEM = 'logdrain.health.org';
const SVG = 'http://www.w3.org/2000/svg';
const HOUR_MS = 3_600_000;
/** Replay states after which there is nothing to cancel. */
const REPLAY_DONE = new Set(['completed', 'cancelled', 'failed']);
const COLORS = { delivered: '#2e7d32', dropped: '#ef8c00', rejected: '#c62828', p50: '#1565c0', p99: '#6a1b9a' };
/** Shades for dropped records by reason, when the health form gives reasons. */
const REASON_COLORS = ['#ef8c00', '#f4b400', '#a0522d', '#ff7043', '#8d6e63', '#ffca28', '#b0bec5'];
/** Reasons that are the drain's own choice (its selectors and sampling), not failures. */
const INTENTIONAL = new Set(['sampling', 'selector']);

const $ = (id) => document.getElementById(id);

let selected = null;

// ---- the API

function drainsPath() {
  return `/admin/orgs/${encodeURIComponent(STORE.getItem(ORG_ITEM) ?? '')}/log-drains`;
}

async function api(method, path, payload) {
  const headers = { authorization: `Bearer ${STORE.getItem(KEY_ITEM) ?? ''}`, accept: 'application/json' };
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: payload === undefined ? undefined : JSON.stringify(payload),
    cache: 'no-store',
    credentials: 'omit',
  });
  const text = await res.text();
  let body;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body };
}

function problem(res) {
  const b = res.body ?? {};
  const code = b.code ? ` ${b.code}` : '';
  return `${res.status}${code}: ${b.message ?? b.error ?? 'request failed'}`;
}

function say(text, kind = 'info') {
  const status = $('status');
  status.textContent = text;
  status.className = kind;
}

// ---- small DOM helpers (text only)

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('data-')) node.setAttribute(k, String(v));
    else node[k] = v;
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(c == null ? '' : String(c)));
  return node;
}

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

const when = (iso) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : '-');
const hourLabel = (h) => new Date(h * HOUR_MS).toISOString().slice(11, 16);
const num = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '-');
const ms = (n) => (typeof n === 'number' ? `${Math.round(n)} ms` : '-');

// ---- optional fields the read form may carry

const circuitOf = (d) => d.circuit ?? d.health?.circuit;
const throttledUntilOf = (d) => d.throttledUntil ?? d.health?.throttledUntil;

function circuitText(c) {
  if (c == null) return '-';
  if (typeof c !== 'object') return String(c).replace('_', ' ');
  const parts = [c.state ?? c.status ?? 'unknown'];
  if (c.openedAt) parts.push(`opened ${when(c.openedAt)}`);
  if (c.retryAt ?? c.nextProbeAt) parts.push(`next try ${when(c.retryAt ?? c.nextProbeAt)}`);
  return parts.join(', ');
}

function lastDelivery(h) {
  const ok = h.lastSuccessAt ? Date.parse(h.lastSuccessAt) : -Infinity;
  const failed = h.lastFailureAt ? Date.parse(h.lastFailureAt) : -Infinity;
  if (ok === -Infinity && failed === -Infinity) return 'never';
  const status = h.lastStatusCode != null ? ` ${h.lastStatusCode}` : '';
  return ok >= failed ? `${when(h.lastSuccessAt)} (ok${status})` : `${when(h.lastFailureAt)} (failed${status})`;
}

// ---- the drain list

async function loadDrains() {
  const res = await api('GET', drainsPath());
  if (res.status !== 200) {
    say(`Could not list drains: ${problem(res)}`, 'error');
    $('drains').hidden = true;
    $('detail').hidden = true;
    $('signin').hidden = false;
    return null;
  }
  $('signin').hidden = true;
  $('session').hidden = false;
  $('session-org').textContent = STORE.getItem(ORG_ITEM);
  renderDrains(res.body.drains);
  return res.body.drains;
}

function renderDrains(drains) {
  const withCircuit = drains.some((d) => circuitOf(d) !== undefined);
  const withThrottle = drains.some((d) => throttledUntilOf(d) !== undefined);
  const head = $('drain-head');
  head.replaceChildren(...['name', 'type', 'state', 'last delivery', 'delivered 24h', 'dropped 24h', 'backlog'].map((t) => el('th', {}, t)));
  if (withCircuit) head.append(el('th', {}, 'circuit'));
  if (withThrottle) head.append(el('th', {}, 'throttled until'));

  const rows = drains.map((d) => {
    const open = el('button', { type: 'button', class: 'link' }, d.name);
    open.addEventListener('click', () => select(d.id));
    const row = el('tr', { 'data-drain-id': d.id, class: d.id === selected ? 'selected' : '' },
      el('td', {}, open),
      el('td', {}, d.type),
      el('td', {}, el('span', { class: `state state-${d.state}`, 'data-state': d.state }, d.state.replace('_', ' '))),
      el('td', {}, lastDelivery(d.health)),
      el('td', { class: 'n' }, num(d.health.deliveredCount24h)),
      el('td', { class: 'n' }, num(d.health.droppedCount24h)),
      el('td', { class: 'n' }, num(d.health.backlog)),
    );
    if (withCircuit) row.append(el('td', { class: 'circuit' }, circuitText(circuitOf(d))));
    if (withThrottle) row.append(el('td', { class: 'throttled' }, throttledUntilOf(d) ? when(throttledUntilOf(d)) : '-'));
    return row;
  });
  $('drain-rows').replaceChildren(...rows);
  $('drain-empty').hidden = drains.length > 0;
  $('drains').hidden = false;
}

// ---- one drain

async function select(drainId) {
  selected = drainId;
  history.replaceState(null, '', `#drain=${encodeURIComponent(drainId)}`);
  for (const row of $('drain-rows').children) row.classList.toggle('selected', row.dataset.drainId === drainId);
  await loadDetail();
}

async function loadDetail() {
  if (!selected) return;
  const base = `${drainsPath()}/${encodeURIComponent(selected)}`;
  const [drain, deliveries, replays] = await Promise.all([
    api('GET', base),
    api('GET', `${base}/deliveries?limit=20`),
    api('GET', `${base}/replays`),
  ]);
  if (drain.status !== 200) {
    say(`Could not read the drain: ${problem(drain)}`, 'error');
    $('detail').hidden = true;
    return;
  }
  renderDetail(drain.body);
  if (deliveries.status === 200) renderDeliveries(deliveries.body.deliveries);
  else say(`Could not list deliveries: ${problem(deliveries)}`, 'error');
  // The replays panel appears only where the API serves replays; a 404 (no such route) hides it.
  if (replays.status === 200) renderReplays(replays.body.replays ?? []);
  else $('replays').hidden = true;
  $('detail').hidden = false;
}

function renderDetail(d) {
  $('detail').dataset.drainId = d.id;
  $('detail-title').textContent = d.name;
  const facts = [
    `${d.type} to ${d.endpoint ?? '-'}`,
    `state ${d.state.replace('_', ' ')}${d.health.pauseReason ? ` (${d.health.pauseReason})` : ''}`,
    `verified ${when(d.verifiedAt)}`,
    `backlog ${num(d.health.backlog)} records`,
  ];
  if (circuitOf(d) !== undefined) facts.push(`circuit ${circuitText(circuitOf(d))}`);
  if (throttledUntilOf(d)) facts.push(`throttled until ${when(throttledUntilOf(d))}`);
  $('detail-facts').textContent = facts.join(' · ');
  for (const button of document.querySelectorAll('[data-action]')) {
    const action = button.dataset.action;
    button.disabled = (action === 'pause' && d.state === 'paused') || (action === 'resume' && d.state !== 'paused');
  }
  renderChart(d.health);
}

// ---- the chart: 24 hourly points, stacked delivered / dropped (by reason when given) / rejected

function seriesOf(hourly) {
  // The reasons with a record in some hour: a reason at zero all day would only crowd the legend.
  const reasons = [...new Set(hourly.flatMap((p) => (p.droppedByReason ? Object.keys(p.droppedByReason).filter((r) => p.droppedByReason[r] > 0) : [])))].sort();
  const series = [{ key: 'delivered', label: 'delivered', color: COLORS.delivered, value: (p) => p.delivered }];
  if (reasons.length > 0) {
    reasons.forEach((r, i) => series.push({ key: `dropped:${r}`, label: `dropped: ${r}`, color: REASON_COLORS[i % REASON_COLORS.length], value: (p) => p.droppedByReason?.[r] ?? 0 }));
  } else {
    series.push({ key: 'dropped', label: 'dropped', color: COLORS.dropped, value: (p) => p.dropped });
  }
  series.push({ key: 'rejected', label: 'rejected', color: COLORS.rejected, value: (p) => p.rejected });
  return series;
}

/** A round axis top at or above `max`: 1, 2 or 5 times a power of ten. */
function niceMax(max) {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= max);
}

function axes(plot, W, H, L, T, top, unit) {
  for (const f of [0, 0.5, 1]) {
    const y = T + H - f * H;
    plot.append(svg('line', { x1: L, x2: L + W, y1: y, y2: y, class: 'grid' }));
    const label = svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' });
    label.textContent = `${num(top * f)}${unit}`;
    plot.append(label);
  }
}

function xLabels(plot, hourly, L, band, y) {
  hourly.forEach((p, i) => {
    if (i % 3 !== 0 && i !== hourly.length - 1) return;
    const label = svg('text', { x: L + i * band + band / 2, y, 'text-anchor': 'middle', class: 'tick' });
    label.textContent = hourLabel(p.h);
    plot.append(label);
  });
}

function renderChart(health) {
  const hourly = health.hourly;
  const series = seriesOf(hourly);
  const [Wt, Ht, L, R, T, B] = [760, 230, 56, 12, 12, 30];
  const W = Wt - L - R;
  const H = Ht - T - B;
  const band = W / hourly.length;
  const totals = hourly.map((p) => series.reduce((n, s) => n + s.value(p), 0));
  const top = niceMax(Math.max(...totals));

  const plot = svg('svg', { viewBox: `0 0 ${Wt} ${Ht}`, role: 'img', 'aria-label': 'records per hour, last 24 hours', id: 'hourly-chart' });
  axes(plot, W, H, L, T, top, '');
  hourly.forEach((p, i) => {
    const g = svg('g', { class: 'hour', 'data-h': p.h, 'data-delivered': p.delivered, 'data-dropped': p.dropped, 'data-rejected': p.rejected });
    // The circuit's openings in the hour (the read form's count), told in the hour's title.
    const openings = p.circuitOpenings ?? 0;
    g.setAttribute('data-circuit-openings', String(openings));
    const title = svg('title');
    title.textContent = `${new Date(p.h * HOUR_MS).toISOString().slice(0, 16).replace('T', ' ')} UTC: ${series.map((s) => `${s.label} ${num(s.value(p))}`).join(', ')}${openings > 0 ? `, circuit opened ${num(openings)}x` : ''}`;
    g.append(title);
    let y = T + H;
    for (const s of series) {
      const v = s.value(p);
      if (v <= 0) continue;
      const h = (v / top) * H;
      y -= h;
      g.append(svg('rect', { x: L + i * band + band * 0.12, y, width: band * 0.76, height: h, fill: s.color, class: `bar ${s.key.split(':')[0]}`, 'data-series': s.key, 'data-value': v }));
    }
    plot.append(g);
  });
  xLabels(plot, hourly, L, band, Ht - 10);

  const charts = [plot];
  const latency = latencyChart(hourly, { Wt, L, R, T, band });
  if (latency) charts.push(latency.node);
  $('chart').replaceChildren(...charts);

  const legend = [...series, ...(latency ? latency.series : [])].map((s) => {
    const swatch = svg('svg', { width: 12, height: 12, 'aria-hidden': 'true' });
    swatch.append(svg('rect', { width: 12, height: 12, fill: s.color }));
    return el('li', {}, swatch, ` ${s.label}`);
  });
  $('legend').replaceChildren(...legend);

  renderAccounting(health.last24h);

  const summary = [`delivered ${num(health.deliveredCount24h)}`, `dropped ${num(health.droppedCount24h)}`, `rejected ${num(health.rejectedCount24h)}`, `p50 latency ${ms(health.p50LatencyMs)}`];
  if (health.p99LatencyMs !== undefined) summary.push(`p99 latency ${ms(health.p99LatencyMs)}`);
  $('latency').textContent = `Last 24 hours: ${summary.join(' · ')}`;
}

/** The 24 hours' accounting, when the read form carries it: every reason, then what is still on its way. */
function renderAccounting(last24h) {
  if (!last24h) {
    $('accounting-table').hidden = true;
    return;
  }
  const row = (key, label, value, cls = '') => el('tr', { 'data-key': key, class: cls }, el('th', {}, label), el('td', { class: 'n' }, num(value)));
  const by = last24h.droppedByReason ?? {};
  const reasons = Object.keys(by).sort((a, b) => Number(INTENTIONAL.has(a)) - Number(INTENTIONAL.has(b)) || a.localeCompare(b));
  $('accounting-rows').replaceChildren(
    row('seen', 'seen', last24h.seen),
    row('delivered', 'delivered', last24h.delivered),
    ...reasons.map((r) => row(`dropped:${r}`, INTENTIONAL.has(r) ? `left out: ${r}` : `dropped: ${r}`, by[r], INTENTIONAL.has(r) ? 'intentional' : '')),
    row('inFlight', 'in flight', last24h.inFlight),
    row('parked', 'parked', last24h.parked),
  );
  $('accounting-table').hidden = false;
}

/** A line per latency percentile the hourly points carry (none: no chart). */
function latencyChart(hourly, { Wt, L, R, T, band }) {
  const present = ['p50', 'p99'].filter((k) => hourly.some((p) => typeof p[`${k}LatencyMs`] === 'number'));
  if (present.length === 0) return null;
  const Ht = 150;
  const B = 30;
  const H = Ht - T - B;
  const top = niceMax(Math.max(...hourly.flatMap((p) => present.map((k) => p[`${k}LatencyMs`] ?? 0))));
  const plot = svg('svg', { viewBox: `0 0 ${Wt} ${Ht}`, role: 'img', 'aria-label': 'delivery latency per hour', id: 'latency-chart' });
  axes(plot, Wt - L - R, H, L, T, top, ' ms');
  const series = present.map((k) => ({ key: k, label: `${k} latency`, color: COLORS[k] }));
  for (const s of series) {
    const points = hourly
      .map((p, i) => (typeof p[`${s.key}LatencyMs`] === 'number' ? `${L + i * band + band / 2},${T + H - (p[`${s.key}LatencyMs`] / top) * H}` : null))
      .filter((x) => x !== null);
    plot.append(svg('polyline', { points: points.join(' '), fill: 'none', stroke: s.color, 'stroke-width': 2, class: `line ${s.key}` }));
    // A dot per hour too: an hour alone between quiet ones is a line of one point, which draws nothing.
    for (const point of points) {
      const [cx, cy] = point.split(',');
      plot.append(svg('circle', { cx, cy, r: 2.5, fill: s.color, class: `point ${s.key}` }));
    }
  }
  xLabels(plot, hourly, L, band, Ht - 10);
  return { node: plot, series };
}

// ---- deliveries and replays

function renderDeliveries(deliveries) {
  $('delivery-rows').replaceChildren(...deliveries.map((r) =>
    el('tr', { class: r.ok ? 'ok' : 'failed', 'data-delivery-id': r.id },
      el('td', {}, when(r.startedAt)),
      el('td', {}, r.kind),
      el('td', { class: 'n' }, r.attempt),
      el('td', { class: 'n' }, r.statusCode ?? '-'),
      el('td', {}, r.ok ? 'ok' : 'failed'),
      el('td', { class: 'error-class' }, r.errorClass ?? ''),
      el('td', { class: 'n' }, ms(r.latencyMs)),
      el('td', { class: 'n' }, r.recordCount ?? '-'),
    )));
  $('delivery-empty').hidden = deliveries.length > 0;
}

/** Records read of the window's records (the total is counted once a worker takes the replay: null before). */
function progressOf(r) {
  const p = r.progress ?? {};
  return { done: p.recordsRead ?? 0, total: p.recordsTotal ?? null, sent: p.recordsSent ?? 0 };
}

function renderReplays(replays) {
  $('replay-rows').replaceChildren(...replays.map((r) => {
    const state = r.status;
    const { done, total, sent } = progressOf(r);
    const cell = el('td', {});
    if (!REPLAY_DONE.has(state)) {
      const cancel = el('button', { type: 'button', class: 'cancel' }, 'Cancel');
      cancel.addEventListener('click', () => cancelReplay(r.id));
      cell.append(cancel);
    }
    return el('tr', { 'data-replay-id': r.id },
      el('td', {}, r.id),
      el('td', { class: 'replay-state' }, state),
      el('td', { class: 'replay-progress' }, el('progress', { max: Math.max(total ?? done, 1), value: done }), ` ${num(done)} / ${total === null ? '?' : num(total)}`),
      el('td', { class: 'n replay-sent' }, num(sent)),
      el('td', {}, when(r.createdAt)),
      cell,
    );
  }));
  $('replay-empty').hidden = replays.length > 0;
  $('replays').hidden = false;
}

async function startReplay(event) {
  event.preventDefault();
  const since = $('replay-since').value.trim();
  const until = $('replay-until').value.trim();
  const res = await api('POST', `${drainsPath()}/${encodeURIComponent(selected)}/replays`, { since, until });
  if (res.status !== 202) say(`Could not start the replay: ${problem(res)}`, 'error');
  else say(`Replay ${res.body.id} requested.`);
  await loadDetail();
}

async function cancelReplay(replayId) {
  const res = await api('DELETE', `${drainsPath()}/${encodeURIComponent(selected)}/replays/${encodeURIComponent(replayId)}`);
  if (res.status >= 300) say(`Could not cancel the replay: ${problem(res)}`, 'error');
  else say(`Replay ${replayId} cancelled.`);
  await loadDetail();
}

// ---- actions

const ACTIONS = {
  verify: (b) => `Verification sent; the token is valid until ${when(b.expiresAt)}.`,
  pause: () => 'Drain paused: records are kept in its backlog until it is resumed.',
  resume: (b) => `Drain resumed: it is ${b.state.replace('_', ' ')} now.`,
  test: (b) => `Test record enqueued (batch ${b.batchId}); it shows in the deliveries once sent.`,
};

async function act(action) {
  if (!selected) return;
  const res = await api('POST', `${drainsPath()}/${encodeURIComponent(selected)}/${action}`);
  if (res.status >= 300) say(`${action} failed: ${problem(res)}`, 'error');
  else say(ACTIONS[action](res.body));
  await refresh();
}

async function refresh() {
  const drains = await loadDrains();
  if (!drains) return;
  if (selected && !drains.some((d) => d.id === selected)) selected = null;
  if (!selected && drains.length > 0) selected = drains[0].id;
  if (selected) await select(selected);
  else $('detail').hidden = true;
}

// ---- start

function start() {
  $('signin-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    STORE.setItem(ORG_ITEM, $('org').value.trim());
    STORE.setItem(KEY_ITEM, $('key').value.trim());
    $('key').value = '';
    say('');
    await refresh();
  });
  $('forget').addEventListener('click', () => {
    STORE.removeItem(KEY_ITEM);
    STORE.removeItem(ORG_ITEM);
    selected = null;
    for (const id of ['drains', 'detail', 'session']) $(id).hidden = true;
    $('signin').hidden = false;
    say('The key is forgotten.');
  });
  $('refresh').addEventListener('click', () => refresh());
  $('replay-form').addEventListener('submit', startReplay);
  for (const button of document.querySelectorAll('[data-action]')) button.addEventListener('click', () => act(button.dataset.action));

  const fromHash = /^#drain=(.+)$/.exec(location.hash);
  if (fromHash) selected = decodeURIComponent(fromHash[1]);
  if (STORE.getItem(KEY_ITEM) && STORE.getItem(ORG_ITEM)) refresh();
}

start();
