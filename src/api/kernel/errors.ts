/**
 * REST error bodies (spec 01 part 7.1). Handlers throw AppError values; the
 * error handler renders them. Framework errors (bad JSON, body too large)
 * keep the framework shape; nothing ever answers with a stack trace.
 */
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { reasonPhrase, renderError } from './error-shapes.js';
import { KernelErrors } from './error-registry.js';
import { SchemaValidationError, validationFailure } from './schema.js';
import { isStoreUnavailable } from '../../store/unavailable.js';
import { UnsupportedCharset } from './charset.js';
import { storeOutageAnswer } from './store-outage.js';

export { reasonPhrase };


/** `details`: extra fields beside the spec's fixed message (spec 01 part 9.1: new fields are additive), such as a `hint`. */
export const unauthorized = (message: 'No token provided' | 'Invalid or expired token', code?: 'SESSION_REVOKED', details?: Record<string, unknown>): AppError =>
  code ? KernelErrors.SESSION_REVOKED(message, details) : KernelErrors.UNAUTHORIZED(message, details);

/** The hint of a 401 whose Authorization header is there but not `Bearer <token>` (a bare token, `Basic ...`). */
export const BEARER_HINT = 'Send the API key or session token as `Authorization: Bearer <token>`.';

/** What a route's body may be; the ingest route declares its own (route config `mediaTypes`). */
export const DEFAULT_MEDIA_TYPES = ['application/json'] as const;

export const insufficientScope = (resourceType: string, resourceId: string, requiredScope: string): AppError =>
  KernelErrors.INSUFFICIENT_SCOPE(`This credential lacks the ${requiredScope} scope.`, {
    resourceType,
    resourceId,
    requiredScope,
  });

export const notProjected = (resourceType: string, resourceId: string, requiredScope: string): AppError =>
  KernelErrors.RESOURCE_NOT_PROJECTED(`The ${resourceType} ${resourceId} is not visible to this credential.`, {
    resourceType,
    resourceId,
    requiredScope,
  });

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The Content-Types the route's body may have, named by a 415; application/json when not declared. */
    mediaTypes?: readonly string[];
  }
}

/**
 * What a 415 adds to the framework body (spec 01 part 7.1): its code, the Content-Type sent and the
 * ones the route reads. `charset`: the type was right, the charset (anything but UTF-8) was not.
 */
function mediaTypeRefusal(req: FastifyRequest, charset?: string): Record<string, unknown> {
  const declared = req.routeOptions.config?.mediaTypes;
  const accepted = declared && declared.length > 0 ? declared : DEFAULT_MEDIA_TYPES;
  const sent = typeof req.headers['content-type'] === 'string' ? req.headers['content-type'].split(';')[0]!.trim().slice(0, 100) : '';
  const names = accepted.length === 1 ? accepted[0]! : `${accepted.slice(0, -1).join(', ')} or ${accepted.at(-1)!}`;
  const message = charset === undefined
    ? `Unsupported Media Type${sent ? ` ${JSON.stringify(sent)}` : ''}: send the body with Content-Type: ${names}.`
    : `Unsupported Media Type: charset ${JSON.stringify(charset)} is not read; send the body in UTF-8 (Content-Type: ${names}, with no charset or charset=utf-8).`;
  return { code: 'UNSUPPORTED_MEDIA_TYPE', message, accepted: [...accepted] };
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((thrown: FastifyError | AppError | SchemaValidationError, req, reply) => {
    const config = req.routeOptions.config;
    // A request that broke its route's schema answers in the family's words and shape (schema.ts).
    const e = thrown instanceof SchemaValidationError ? validationFailure(thrown.issues, config?.errorShape, config?.validationError) : thrown;
    if (e instanceof AppError) {
      const body = renderError(e, req.routeOptions.config?.errorShape);
      // 401s carry the spec's message; only a revoked session adds a code.
      if (e.statusCode === 401 && e.code === 'UNAUTHORIZED') delete body.code;
      return reply.status(e.statusCode).send(body);
    }
    if (e instanceof UnsupportedCharset) return reply.status(415).send({ statusCode: 415, error: reasonPhrase(415), ...mediaTypeRefusal(req, e.charset) });
    // A client that hung up (mid-body, say): its request's own socket error, nothing about the server.
    if (req.raw.destroyed) req.log.debug({ event: 'api.client_gone', err: { message: e.message, code: e.code } }, 'client went away before the answer');
    // The store could not be reached: a 503 on every route, inviting a retry where one is safe (store-outage.ts).
    if (isStoreUnavailable(e)) {
      const answer = storeOutageAnswer(req);
      const retryAfter = answer.details.retryAfterSeconds;
      req.log.warn({ event: 'api.store_unavailable', code: answer.code, retrySafe: retryAfter !== undefined, err: { message: e.message } }, 'store unavailable');
      if (typeof retryAfter === 'number') reply.header('retry-after', String(retryAfter));
      return reply.status(answer.statusCode).send(renderError(answer, config?.errorShape));
    }
    const status = typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500 ? e.statusCode : 500;
    if (status === 500) {
      req.log.error({ event: 'api.error', err: { message: e.message, code: e.code } }, 'unhandled error');
      return reply.status(500).send({ statusCode: 500, error: reasonPhrase(500), message: 'Internal Server Error' });
    }
    const body: Record<string, unknown> = { statusCode: status, error: reasonPhrase(status), message: e.message };
    // Spec 01 part 7.2: a 413 names what was over which cap.
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') Object.assign(body, { code: 'PAYLOAD_TOO_LARGE', field: 'body', max: req.routeOptions.bodyLimit });
    // A 415 names the Content-Type the route reads.
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') Object.assign(body, mediaTypeRefusal(req));
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({ statusCode: 404, error: reasonPhrase(404), message: `Route ${req.method}:${req.url.split('?')[0]} not found` }),
  );
}
