/** An OpenTelemetry collector's OTLP/HTTP logs endpoint: protobuf, authenticated by headers, verified by any 2xx. */
import type { Destination } from './destination.js';

export const otlp: Destination<'otlp'> = {
  type: 'otlp',
  endpoint: { from: 'body' },
  formats: false,
  encoding: () => 'otlp-protobuf',
  signs: false,
  verification: 'any-2xx',
};
