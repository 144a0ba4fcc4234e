/**
 * The one place a carrier adapter is chosen, from configuration
 * (`TELEPHONY_CARRIER`, read by src/config/config.ts). `sandbox`, the
 * default, is the deterministic in-process carrier. A real carrier is an
 * adapter implementing `Carrier` (port.ts), added here under its name.
 */
import type { Config } from '../../config/config.js';
import type { Carrier } from './port.js';
import { createSandboxCarrier } from './sandbox.js';

export type CarrierAdapterName = Config['carrierAdapter'];
export const CARRIER_ADAPTERS: readonly CarrierAdapterName[] = ['sandbox'];

export function selectCarrier(config: Pick<Config, 'carrierAdapter'>): Carrier {
  switch (config.carrierAdapter) {
    case 'sandbox':
      return createSandboxCarrier();
  }
}
