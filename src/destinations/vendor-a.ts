/** Vendor A's log intake (its endpoint derived from the drain's site): its JSON shape, authenticated by headers. */
import type { Destination } from './destination.js';

export const vendorA: Destination<'vendor-a'> = {
  type: 'vendor-a',
  endpoint: { from: 'site', url: (s, site) => s.vendorAIntakeUrl.replace('{site}', site) },
  formats: false,
  encoding: () => 'vendor-a-logs',
  signs: false,
  verification: 'any-2xx',
};
