/**
 * A request body's chunks as they arrive, for a parser that reads them one at
 * a time (record-body.ts) instead of being handed the body joined whole.
 * It keeps the rules fastify's own body reader keeps: a body over the route's
 * limit answers 413 (by its Content-Length before a byte is read, or as soon
 * as the bytes received pass it), a body shorter or longer than its
 * Content-Length 400, and an error of the request's stream (a client that hung
 * up mid-body) is that request's own, a 4xx. On a refusal it stops listening
 * and lets the rest of the body flow away unread, as fastify's reader does:
 * the answer then closes the connection. Chunks are kept as they came, never
 * joined.
 */
import type { Readable } from 'node:stream';
import { errorCodes } from 'fastify';
import type { BodyChunks } from './record-body.js';

/** The chunks, and a way to stop reading them: a parser that refuses the body before its end lets the rest flow away. */
export interface RequestChunks extends BodyChunks {
  release(): void;
}

/** What fastify hands a parser: the request's stream, which a preParsing hook may have replaced. */
type Payload = Readable & { receivedEncodedLength?: number };

export function bodyChunks(payload: Payload, contentLengthHeader: string | undefined, limit: number): RequestChunks {
  const contentLength = Number(contentLengthHeader);
  const queue: Buffer[] = [];
  let received = 0;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;

  const detach = () => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
  };
  const settle = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const fail = (e: Error) => {
    detach();
    failure ??= e;
    queue.length = 0;
    settle();
  };
  function onData(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    received += bytes.length;
    // The body once decoded must not pass the limit either (a compressed body; see fastify's reader).
    if (received > limit || (payload.receivedEncodedLength ?? 0) > limit) {
      fail(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    queue.push(bytes);
    settle();
  }
  function onEnd(): void {
    detach();
    if (!Number.isNaN(contentLength) && (payload.receivedEncodedLength || received) !== contentLength) {
      fail(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    ended = true;
    settle();
  }
  function onError(e: Error & { statusCode?: number }): void {
    if (!(typeof e.statusCode === 'number' && e.statusCode >= 400)) e.statusCode = 400;
    fail(e);
  }

  if (contentLength > limit) failure = new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
  else {
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.resume();
  }

  return {
    release() {
      detach();
      queue.length = 0;
      payload.resume();
    },
    async next() {
      for (;;) {
        if (failure) throw failure;
        const chunk = queue.shift();
        if (chunk) return chunk;
        if (ended) return undefined;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
