/** A customer's own HTTPS endpoint: json or ndjson as the drain asks, signed, verified by echoing the token. */
import type { Destination } from './destination.js';

export const http: Destination<'http'> = {
  type: 'http',
  endpoint: { from: 'body' },
  formats: true,
  encoding: (format) => format,
  signs: true,
  verification: 'token-echo',
};
