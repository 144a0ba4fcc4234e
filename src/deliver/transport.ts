/**
 * The HTTP transport: one undici Agent (a keep-alive pool per origin) whose
 * connector checks every resolved address against the SSRF guard at connect
 * time, trusts NODE_EXTRA_CA_CERTS in-process, and follows no redirects.
 * It reads at most a small prefix of any answer, so a hostile destination's
 * huge body costs nothing, and bounds each attempt's whole time, so one that
 * trickles its answer a byte at a time does not hold a connection forever.
 */
import { setMaxListeners } from 'node:events';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { checkConnectTarget, createGuardedLookup, type ConnectTargetCheck } from '../security/ssrf-guard.js';

export interface TransportOptions {
  allowHosts: readonly string[];
  extraCaCerts?: string | undefined;
  timeoutMs: number;
  connectionsPerOrigin?: number;
}

export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

export type TransportResult =
  | { kind: 'response'; statusCode: number; headers: Record<string, string | string[] | undefined>; body: Buffer; latencyMs: number }
  | { kind: 'error'; error: unknown; latencyMs: number };

/** Bytes of an answer kept: enough for the 1 KB excerpt and an OTLP partial-success body. */
export const RESPONSE_READ_LIMIT = 64 * 1024;

export interface Transport {
  post(req: PostRequest): Promise<TransportResult>;
  close(): Promise<void>;
}

/**
 * Attempts started within this long of each other share one deadline signal: an attempt is
 * given between `timeoutMs` and `timeoutMs` plus this. A signal of its own per attempt
 * (`AbortSignal.timeout`) cost about 15 µs of CPU per POST, 4% of the worker's time when
 * records of thousands of agents make every batch small.
 */
export const DEADLINE_SLOT_MS = 100;

/** A deadline signal per slot of start times, each aborted (with a TimeoutError) once its last attempt's time is up. */
export function createDeadlines(timeoutMs: number, slotMs = DEADLINE_SLOT_MS): () => AbortSignal {
  let current: { signal: AbortSignal; until: number } | undefined;
  return () => {
    const now = performance.now();
    if (current && now < current.until) return current.signal;
    const controller = new AbortController();
    // Every attempt of the slot listens to this one signal.
    setMaxListeners(0, controller.signal);
    const timer = setTimeout(() => controller.abort(new DOMException('attempt timed out', 'TimeoutError')), timeoutMs + slotMs);
    timer.unref();
    current = { signal: controller.signal, until: now + slotMs };
    return controller.signal;
  };
}

/** Destinations as parsed and checked once: the same few URLs are posted to thousands of times a second. */
const MAX_CACHED_TARGETS = 10_000;

export function createTransport(opts: TransportOptions): Transport {
  // One TLS context for every connection: building one from the CA bundle (140-odd roots) costs
  // milliseconds, which a context per connection paid again on every new connection.
  const secureContext = opts.extraCaCerts ? createSecureContext({ ca: [...rootCertificates, opts.extraCaCerts] }) : undefined;
  const agent = new Agent({
    connect: { ...(secureContext ? { secureContext } : {}), lookup: createGuardedLookup({ allowHosts: opts.allowHosts }) },
    connections: opts.connectionsPerOrigin ?? 16,
    keepAliveTimeout: 30_000,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });

  const deadline = createDeadlines(opts.timeoutMs);
  const targets = new Map<string, { target: URL; direct: ConnectTargetCheck }>();
  const targetOf = (url: string) => {
    let t = targets.get(url);
    if (t === undefined) {
      if (targets.size >= MAX_CACHED_TARGETS) targets.clear();
      const target = new URL(url);
      // IP-literal hosts never reach the lookup hook; check them here.
      targets.set(url, (t = { target, direct: checkConnectTarget(target.hostname, opts.allowHosts) }));
    }
    return t;
  };

  return {
    async post(req) {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      const { target, direct } = targetOf(req.url);
      if (!direct.ok) {
        return { kind: 'error', error: Object.assign(new Error(direct.reason), { code: 'ERR_SSRF_BLOCKED' }), latencyMs: 0 };
      }
      try {
        const res = await request(target, {
          method: 'POST',
          headers: req.headers,
          body: req.body,
          dispatcher: agent,
          signal: deadline(),
        });
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
          if (size >= RESPONSE_READ_LIMIT) {
            res.body.destroy();
            break;
          }
        }
        return { kind: 'response', statusCode: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).subarray(0, RESPONSE_READ_LIMIT), latencyMs: latency() };
      } catch (error) {
        return { kind: 'error', error, latencyMs: latency() };
      }
    },
    close: () => agent.close(),
  };
}
