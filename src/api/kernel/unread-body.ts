/**
 * An answer sent before its request's body has arrived (a 401 or 403 from
 * the access kernel, which refuses before the body is read; a 429; a 415)
 * closes the connection. Kept open, Node would wait for the rest of the body
 * to reuse the connection: a client that sent part of it and then waited for
 * the answer would hold its socket until REQUEST_TIMEOUT_MS and then receive
 * a second answer, a 408, for the same request.
 */
import type { FastifyInstance } from 'fastify';

export function closeOnUnreadBody(app: FastifyInstance): void {
  app.addHook('onSend', (req, reply, payload, done) => {
    // `complete` is Node's: the whole message, body included, has been received. (Injected requests,
    // which have no connection, do not carry it.)
    if (req.raw.complete === false) reply.header('connection', 'close');
    done(null, payload);
  });
}
