/**
 * The error body each family's spec gives, from one AppError: a route names
 * its shape in its config (`errorShape`), the error handler renders with it.
 *
 *   conventions  spec 01 part 7.1: {statusCode, error, code, message, ...details} (drains, log reads)
 *   telephony    spec 02 part 7: {statusCode, error, message}; a validation failure's
 *                message is the array of the rules that failed
 *   workflows    spec 03 part 7: {statusCode, message, code, ...detail}, validation
 *                details[] entries {path, constraint, message}
 *   templates    spec 03 part 7: the envelope {code, message, ...fields}; a validation
 *                failure answers in the framework shape (contract templates) and spec 01's
 *                platform codes (access denials, archived organizations) in spec 01's
 *   framework    spec 01 part 7.1.1 (channel sends): a 400 or 404 is the framework's
 *                {statusCode, error, message}, a validation failure's message the array
 *                of the rules that failed; every other status (permission denials,
 *                idempotency conflicts) keeps the conventions shape with its code
 *   persona      spec 03 part 7 over spec 01 part 7.1: the framework default
 *                {statusCode, error, message} for validation (every failed rule in
 *                the `message` array) and the family's codeless answers (its 404s);
 *                permission denials keep 7.1.2 with the message `Insufficient
 *                permissions`; every other code keeps the conventions shape
 */
import { STATUS_CODES } from 'node:http';
import type { AppError } from '../../errors.js';
import { definitionOf } from './error-registry.js';

export type ErrorShape = 'conventions' | 'telephony' | 'workflows' | 'templates' | 'framework' | 'persona';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The family's error body (kernel/error-shapes.ts); `conventions` when not given. */
    errorShape?: ErrorShape;
  }
}

/** Codes spec 01 part 7 defines for every family, answered in its shape whatever the route's. */
const PLATFORM_CODES = new Set(['INSUFFICIENT_SCOPE', 'RESOURCE_NOT_PROJECTED', 'APPROVAL_REQUIRES_HUMAN', 'VENDOR_REJECTED', 'RATE_LIMITED', 'UNAUTHORIZED', 'SESSION_REVOKED', 'UPSTREAM_UNAVAILABLE', 'ORG_ARCHIVED']);

export const reasonPhrase = (status: number): string => STATUS_CODES[status] ?? 'Error';

export function renderError(e: AppError, shape: ErrorShape = 'conventions'): Record<string, unknown> {
  // A code registered plain answers its status and message alone on every route.
  if (definitionOf(e.code)?.plain) return { statusCode: e.statusCode, message: e.message };
  switch (shape) {
    case 'conventions':
      return { statusCode: e.statusCode, error: reasonPhrase(e.statusCode), code: e.code, message: e.message, ...e.details };
    case 'telephony': {
      // Spec 01's platform answers (access, vendor refusals, budgets) keep spec 01's shape on these
      // routes too (contract telephony T2, T3); a missing scope says so in spec 02's words (part 7).
      if (PLATFORM_CODES.has(e.code)) {
        const message = e.code === 'INSUFFICIENT_SCOPE' ? 'Insufficient permissions for this organization' : e.message;
        return { statusCode: e.statusCode, error: reasonPhrase(e.statusCode), code: e.code, ...e.details, message };
      }
      const rules = e.details.message;
      const message = e.code === 'VALIDATION_FAILED' ? (Array.isArray(rules) ? rules : [e.message]) : e.message;
      return { statusCode: e.statusCode, error: reasonPhrase(e.statusCode), message };
    }
    case 'workflows': {
      const { message: _rules, ...detail } = e.details;
      return { statusCode: e.statusCode, message: e.message, code: e.code, ...detail };
    }
    case 'framework': {
      if (e.statusCode !== 400 && e.statusCode !== 404) return renderError(e, 'conventions');
      const rules = e.details.message;
      return { statusCode: e.statusCode, error: reasonPhrase(e.statusCode), message: Array.isArray(rules) ? rules : e.message };
    }
    case 'templates': {
      if (e.code === 'VALIDATION_FAILED') return renderError(e, 'framework');
      if (PLATFORM_CODES.has(e.code)) return renderError(e, 'conventions');
      const { message: _rules, ...fields } = e.details;
      return { code: e.code, message: e.message, ...fields };
    }
    case 'persona': {
      if (e.code === 'VALIDATION_FAILED') {
        const rules = e.details.message;
        return { statusCode: e.statusCode, error: reasonPhrase(e.statusCode), message: Array.isArray(rules) ? rules : [e.message] };
      }
      if (definitionOf(e.code)?.codeless) return { statusCode: e.statusCode, error: reasonPhrase(e.statusCode), message: e.message };
      const message = e.code === 'INSUFFICIENT_SCOPE' ? 'Insufficient permissions' : e.message;
      return { statusCode: e.statusCode, error: reasonPhrase(e.statusCode), code: e.code, message, ...e.details };
    }
  }
}
