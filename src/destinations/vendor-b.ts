/** Vendor B's log intake (on its intake hosts): its JSON shape, authenticated by headers. */
import type { Destination } from './destination.js';

export const vendorB: Destination<'vendor-b'> = {
  type: 'vendor-b',
  endpoint: { from: 'body', intakeHosts: (s) => s.vendorBHosts },
  formats: false,
  encoding: () => 'vendor-b-logs',
  signs: false,
  verification: 'any-2xx',
};
