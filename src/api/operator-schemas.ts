/**
 * Schemas of the operator endpoints (/healthz, /readyz, /metrics): public,
 * so the OpenAPI document shows them without security, with their answers.
 */
import { Type } from '@sinclair/typebox';

const tags = ['operator'];
const Readiness = Type.Object(
  {
    status: Type.String({ enum: ['ready', 'not_ready'] }),
    checks: Type.Object(
      // accounting: only where a worker runs in the process (start).
      { store: Type.Boolean(), consumer: Type.Boolean(), accounting: Type.Optional(Type.Boolean()), shuttingDown: Type.Boolean() },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const operatorSchemas = {
  healthz: {
    tags, summary: 'Liveness: the process answers',
    response: { 200: Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false }) },
  },
  readyz: {
    tags, summary: 'Readiness: the store answers, the consumer runs (start), accounting keeps up, not shutting down',
    response: { 200: Readiness, 503: Readiness },
  },
  metrics: {
    tags, summary: 'Prometheus metrics (text exposition format)',
    produces: ['text/plain'],
    response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }) },
  },
};
