/**
 * The version and commit of this build (dist/build-info.json, written by `npm run build`), for
 * `logdrain --version`, the start line and the logdrain_build_info metric. Read once; a tree that
 * was never built through npm (tests importing src/ directly) reports the package version and
 * commit "unknown".
 */
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  version: string;
  commit: string;
}

let cached: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  if (cached) return cached;
  // src/config/ and dist/config/ are both two levels below the package root.
  const root = new URL('../../', import.meta.url);
  const read = (path: string): Record<string, unknown> | undefined => {
    try {
      return JSON.parse(readFileSync(new URL(path, root), 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };
  const built = read('dist/build-info.json');
  const pkg = read('package.json');
  const text = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
  cached = { version: text(built?.version) ?? text(pkg?.version) ?? 'unknown', commit: text(built?.commit) ?? 'unknown' };
  return cached;
}
