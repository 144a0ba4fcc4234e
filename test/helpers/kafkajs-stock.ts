/**
 * kafkajs's own record decoders, loaded from their files whatever Node's module cache holds (the
 * worker puts its record decoder there: src/source/kafka-record-decoder.ts), to compare against.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';

const require = createRequire(import.meta.url);
type Fn = (...args: never[]) => unknown;

interface FreshModule {
  filename: string;
  paths: string[];
  exports: unknown;
  require(id: string): unknown;
  _compile(source: string, file: string): void;
}
const Module = require('node:module') as { new (id: string): FreshModule; _nodeModulePaths(dir: string): string[] };

/** A module of kafkajs compiled afresh, `replace` answering its requires of those ids. */
function compileFresh(id: string, replace: Record<string, unknown> = {}): unknown {
  const file = require.resolve(id);
  const m = new Module(file);
  m.filename = file;
  m.paths = Module._nodeModulePaths(dirname(file));
  const own = m.require.bind(m);
  m.require = (dep: string) => (dep in replace ? replace[dep] : own(dep));
  m._compile(readFileSync(file, 'utf8'), file);
  return m.exports;
}

/** kafkajs's record decoder (record/v0/decoder.js) as shipped. */
export const stockRecordDecoder = (): Fn => compileFresh('kafkajs/src/protocol/recordBatch/record/v0/decoder.js') as Fn;

/** kafkajs's record batch decoder (recordBatch/v0/decoder.js) decoding each record with `recordDecoder`. */
export const batchDecoderWith = (recordDecoder: unknown): ((decoder: unknown) => Promise<{ records: unknown[] }>) =>
  compileFresh('kafkajs/src/protocol/recordBatch/v0/decoder.js', { '../record/v0/decoder': recordDecoder }) as (decoder: unknown) => Promise<{ records: unknown[] }>;

/** kafkajs's consumer batch (consumer/batch.js) as shipped. */
export const stockBatch = (): new (topic: string, fetchedOffset: unknown, data: object) => Record<string, unknown> =>
  compileFresh('kafkajs/src/consumer/batch.js') as new (topic: string, fetchedOffset: unknown, data: object) => Record<string, unknown>;
