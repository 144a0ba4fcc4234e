/**
 * The process's HTTP port: it listens at once with a first handler and hands its requests to
 * another when told (the API's, once built and ready: run.ts). Handlers are swapped between two
 * requests, never during one, so every request is answered whole by one of them.
 *
 * Closing lets the requests in flight finish: until the last of them has been answered the port
 * still takes connections, their requests answered by the handler of the moment (a stopping
 * process's 503 CORE_DRAINING: run.ts), and then it stops listening. Closing is prompt however
 * clients poll: a load balancer or a probe on a kept-alive connection would otherwise hold
 * `server.close()` open for as long as it polls. Once closing, every answer says
 * `Connection: close`, each connection closes as soon as its answer is out, and one still open
 * `graceMs` after (a request still trickling in, an answer that never ends) is cut, as Node stops
 * enforcing its request timeout on a closing server.
 */
import { createServer, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';

export interface HttpListenerOptions {
  host: string;
  port: number;
  server?: ServerOptions;
  handler: RequestListener;
  /** How long a connection may stay open after closing began. */
  graceMs: number;
  /** An error of the listening socket (too many open files on accept): reported, never thrown. */
  onError(err: Error): void;
}

export interface HttpListener {
  server: Server;
  port: number;
  /** From the next request on, `handler` answers (a request being answered keeps its handler). */
  answerWith(handler: RequestListener): void;
  /**
   * Stops listening once the requests being answered now have been answered (new ones meanwhile
   * get the handler of the moment), and resolves once every connection is closed.
   */
  close(): Promise<void>;
}

/**
 * How long an idle kept-alive connection stays open: longer than the idle timeouts of common load
 * balancers (60 s), which would otherwise send a request on a connection being closed and get a
 * reset, and than any stretch a starting process is busy compiling its routes (with Node's 5 s
 * default, a poller's next request on such a connection was reset). Fastify's own default.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

export async function openHttpListener(opts: HttpListenerOptions): Promise<HttpListener> {
  let handler = opts.handler;
  let closing: Promise<void> | undefined;
  const answering = new Set<ServerResponse>();
  const server = createServer(opts.server ?? {}, (req, res) => {
    answering.add(res);
    res.once('close', () => {
      answering.delete(res);
      // Its connection is idle now (or gone): closed rather than kept for a next request.
      if (closing) server.closeIdleConnections();
    });
    if (closing) res.setHeader('connection', 'close');
    handler(req, res);
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', opts.onError);
  return {
    server,
    port: (server.address() as { port: number }).port,
    answerWith(next) {
      handler = next;
    },
    close() {
      closing ??= new Promise((resolve) => {
        for (const res of answering) if (!res.headersSent) res.setHeader('connection', 'close');
        server.closeIdleConnections();
        let listening = true;
        // Closes the idle connections too; resolves once the others have closed.
        const stopListening = () => {
          if (!listening) return;
          listening = false;
          server.close(() => {
            clearTimeout(cut);
            resolve();
          });
        };
        const cut = setTimeout(() => {
          stopListening();
          server.closeAllConnections();
        }, opts.graceMs);
        cut.unref();
        // The requests in flight now; those arriving meanwhile are answered at once and not waited for.
        const inFlight = new Set([...answering].filter((res) => !res.writableFinished));
        if (inFlight.size === 0) return stopListening();
        for (const res of inFlight) {
          res.once('close', () => {
            inFlight.delete(res);
            if (inFlight.size === 0) stopListening();
          });
        }
      });
      return closing;
    },
  };
}
