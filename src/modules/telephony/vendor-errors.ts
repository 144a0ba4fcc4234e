/**
 * The telephony vendor ports as the family uses them, each failed call counted on /metrics by
 * port and class (logdrain_telephony_vendor_errors_total): the carrier's or the media server's
 * refusal is `rejected`, a media server out of reach `unavailable`, anything else thrown `error`.
 * The error itself goes on to the caller unchanged.
 */
import type { Vendors } from '../../vendors/index.js';
import { CarrierRejection } from '../../vendors/carrier/port.js';
import { MediaRejected, MediaUnavailable } from '../../vendors/media/port.js';
import type { FamilyMetrics, TelephonyVendorPort, VendorErrorClass } from '../platform-deps.js';

type TelephonyVendors = Pick<Vendors, 'carrier' | 'rcs' | 'voiceCalls' | 'media'>;

export function classOf(e: unknown): VendorErrorClass {
  if (e instanceof CarrierRejection || e instanceof MediaRejected) return 'rejected';
  if (e instanceof MediaUnavailable) return 'unavailable';
  return 'error';
}

/** `port` whose methods count what they throw or reject with. */
function counted<T extends object>(port: T, name: TelephonyVendorPort, metrics: FamilyMetrics): T {
  const count = (e: unknown): never => {
    metrics.telephonyVendorError(name, classOf(e));
    throw e;
  };
  return new Proxy(port, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        let r: unknown;
        try {
          r = (v as (...a: unknown[]) => unknown).apply(target, args);
        } catch (e) {
          return count(e);
        }
        return r instanceof Promise ? r.catch(count) : r;
      };
    },
  });
}

export function countingVendors<V extends TelephonyVendors>(vendors: V, metrics: FamilyMetrics): V {
  return {
    ...vendors,
    carrier: counted(vendors.carrier, 'carrier', metrics),
    rcs: counted(vendors.rcs, 'rcs', metrics),
    voiceCalls: counted(vendors.voiceCalls, 'voice_calls', metrics),
    media: counted(vendors.media, 'media', metrics),
  };
}
