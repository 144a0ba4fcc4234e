/** Every drain type, once: the type list (DRAIN_TYPES) is derived from this table. */
import type { Destination } from './destination.js';
import { http } from './http.js';
import { otlp } from './otlp.js';
import { vendorA } from './vendor-a.js';
import { vendorB } from './vendor-b.js';

export type { Destination, EncodingName, EndpointRule, EndpointSettings } from './destination.js';

const TABLE = [http, otlp, vendorA, vendorB] as const;

/** The types of a table in its order, typed as the tuple of their literals. */
function typesOf<T extends readonly Destination[]>(table: T): { readonly [K in keyof T]: T[K] extends Destination<infer N> ? N : never } {
  return table.map((d) => d.type) as never;
}

export const DRAIN_TYPES = typesOf(TABLE);
export type DrainType = (typeof DRAIN_TYPES)[number];

const BY_TYPE = new Map<string, Destination>(TABLE.map((d) => [d.type, d]));

/** The destination of a drain type (every stored drain has one of DRAIN_TYPES). */
export function destinationOf(type: DrainType): Destination {
  return BY_TYPE.get(type)!;
}

/** The types whose destinations have a property: for messages that name them ("only http drains are signed"). */
export function typesWhere(has: (d: Destination) => boolean): DrainType[] {
  return TABLE.filter(has).map((d) => d.type as DrainType);
}
