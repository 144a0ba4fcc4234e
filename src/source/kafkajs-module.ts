/**
 * A module of kafkajs 2.2 replaced through Node's module cache before kafkajs loads it (its record
 * decoder: kafka-record-decoder.ts; its consumer batch: kafka-batch.ts). kafkajs takes its modules
 * with `require` when the module that needs one is first loaded, so the replacement must be in the
 * cache before then; a kafkajs other than the version the replacements were written against keeps
 * its own.
 */
import { createRequire } from 'node:module';

export const kafkajsRequire = createRequire(import.meta.url);

/** The kafkajs versions the replacements are written against. */
const KAFKAJS_VERSION = /^2\.2\.\d+$/;

/**
 * Puts `make()` in Node's module cache as kafkajs's module `id` (a path inside the package), in
 * place of kafkajs's own (loaded or not). True if kafkajs will use it: the version is 2.2.x and
 * `loadedBy`, the module that requires `id`, has not been loaded yet. Once a process.
 */
export function replaceKafkajsModule(id: string, loadedBy: string, make: () => unknown): boolean {
  try {
    const version = (kafkajsRequire('kafkajs/package.json') as { version: string }).version;
    if (!KAFKAJS_VERSION.test(version)) return false;
    if (kafkajsRequire.cache[kafkajsRequire.resolve(loadedBy)] !== undefined) return false;
    const path = kafkajsRequire.resolve(id);
    const exports = make();
    const loaded = kafkajsRequire.cache[path];
    if (loaded !== undefined) loaded.exports = exports;
    else {
      const Module = kafkajsRequire('node:module') as { new (id: string): NodeJS.Module };
      const m = new Module(path);
      m.filename = path;
      m.exports = exports;
      m.loaded = true;
      kafkajsRequire.cache[path] = m;
    }
    return true;
  } catch {
    return false;
  }
}
