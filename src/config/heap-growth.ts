/**
 * V8's heap growth, set from the configuration when a long-running command starts. After each full
 * collection V8 lets the old generation grow to a multiple of what was left live before the next
 * one, and picks that multiple itself, up to four times when the program allocates fast. A worker at
 * full speed allocates fast and keeps about 70-90 MB live, so V8 let it reach 250-300 MB of RSS,
 * most of it garbage waiting for a collection. A fixed multiple of two (HEAP_GROWING_PERCENT=100)
 * holds the worker's peak RSS at 171-208 MB for about 7% of its records per CPU-second on the NDJSON
 * path (4% on OTLP): full collections come more often (bench/results/memory-settings.json,
 * heapGrowing and heapGrowingRecheck). 0 leaves the choice to V8, for CPU over memory.
 *
 * V8 takes this flag on the command line, not in NODE_OPTIONS (Node refuses it there), and reads it
 * at each collection, so setting it at start, before the heap has grown, is enough.
 */
import v8 from 'node:v8';

export function applyHeapGrowing(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
