/**
 * The process's HTTP port (src/commands/http-listener.ts): handlers swapped between requests,
 * never during one; a close that keeps listening until the requests in flight are answered and
 * completes however clients hold their connections (kept alive and polling, or trickling a request
 * in); socket errors reported, not thrown.
 */
import { afterEach, describe, expect, it } from 'vitest';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { openHttpListener, type HttpListener } from '../../../src/commands/http-listener.js';

interface Answer { status?: number; body?: string; connection?: string; error?: string }

function get(port: number, agent: http.Agent | false, path = '/'): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, body, connection: res.headers.connection }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
  });
}

/** A handler that answers `name`, holding each answer until released when `hold` is set. */
function answering(name: string, hold = false) {
  const held: (() => void)[] = [];
  let arrived: (() => void) | undefined;
  const handler = (_req: IncomingMessage, res: ServerResponse) => {
    const answer = () => void res.writeHead(200).end(name);
    if (!hold) return answer();
    held.push(answer);
    arrived?.();
  };
  return {
    handler,
    /** Resolves once a request is being held. */
    arrival: () => (held.length > 0 ? Promise.resolve() : new Promise<void>((r) => (arrived = r))),
    release: () => held.splice(0).forEach((f) => f()),
  };
}

describe('the HTTP listener', () => {
  let listener: HttpListener | undefined;
  const agents: http.Agent[] = [];
  afterEach(async () => {
    for (const a of agents) a.destroy();
    await listener?.close();
    listener = undefined;
  });
  const keptAlive = () => {
    const a = new http.Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(a);
    return a;
  };
  const open = (handler: http.RequestListener, graceMs = 60_000, onError: (e: Error) => void = () => {}) =>
    openHttpListener({ host: '127.0.0.1', port: 0, handler, graceMs, onError });

  it('answers a request with the handler current when it arrived, the next ones with the new one', async () => {
    const first = answering('first', true);
    listener = await open(first.handler);
    const agent = keptAlive();
    const inFlight = get(listener.port, agent);
    await first.arrival();
    listener.answerWith(answering('second').handler);
    first.release();
    expect(await inFlight).toMatchObject({ status: 200, body: 'first' });
    // The same kept-alive connection, and a new one: both the new handler's.
    expect(await get(listener.port, agent)).toMatchObject({ status: 200, body: 'second' });
    expect(await get(listener.port, false)).toMatchObject({ status: 200, body: 'second' });
  });

  it('closes with a kept-alive connection busy: new requests meanwhile get the handler of the moment, its answer closes it, then requests are refused and the close completes', async () => {
    const slow = answering('answered', true);
    listener = await open(slow.handler);
    const agent = keptAlive();
    const inFlight = get(listener.port, agent);
    await slow.arrival();
    listener.answerWith((_req, res) => void res.writeHead(503).end('draining'));
    let closed = false;
    const closing = listener.close().then(() => (closed = true));
    expect(closed).toBe(false);
    // Still listening while the request in flight is answered: a new connection's request is
    // answered at once by the handler of the moment, and its connection closed after it.
    expect(await get(listener.port, false)).toEqual({ status: 503, body: 'draining', connection: 'close' });
    expect(closed).toBe(false);
    slow.release();
    // The answer goes out whole, telling the client the connection ends with it.
    expect(await inFlight).toEqual({ status: 200, body: 'answered', connection: 'close' });
    // Not served on the old connection (it is gone), nor on a new one (no longer listening).
    expect(await get(listener.port, agent)).toEqual({ error: 'ECONNREFUSED' });
    await closing;
    expect(closed).toBe(true);
  });

  it('closes with a request still trickling in: its connection is cut once the grace has passed', async () => {
    listener = await open(answering('never').handler, 200);
    const socket = connect(listener.port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    const ended = new Promise<void>((r) => socket.once('close', () => r()));
    await listener.close();
    await ended;
    expect(socket.destroyed).toBe(true);
  });

  it('keeps a kept-alive connection open through a busy stretch longer than Node\'s default (5 s and a second of margin): the next request is answered, not reset', async () => {
    listener = await open(answering('ok').handler);
    const agent = keptAlive();
    expect(await get(listener.port, agent)).toMatchObject({ status: 200 });
    // The process busy for 6.5 s (as while the API compiles its routes on a loaded machine): the
    // connection's idle timer is due when the loop comes back, with the next request already sent.
    const until = Date.now() + 6_500;
    while (Date.now() < until) { /* busy */ }
    expect(await get(listener.port, agent)).toMatchObject({ status: 200, body: 'ok' });
  });

  it('reports an error of its listening socket instead of throwing it', async () => {
    const errors: string[] = [];
    listener = await open(answering('ok').handler, 60_000, (e) => errors.push(e.message));
    // As the socket does when accept() fails (too many open files): an 'error' event on the server.
    listener.server.emit('error', new Error('accept EMFILE'));
    expect(errors).toEqual(['accept EMFILE']);
    expect(await get(listener.port, false)).toMatchObject({ status: 200, body: 'ok' });
  });
});
