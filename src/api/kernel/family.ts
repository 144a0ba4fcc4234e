/**
 * A route family is one encapsulated fastify plugin on the kernel: its routes
 * with their access declarations and schemas, its scopes and error codes
 * (declared when its module loads), its services, repositories and tables.
 * Adding one is a folder under src/modules/ and a line in
 * src/modules/index.ts (and one in src/modules/background.ts for its
 * migrations, which processes without routes apply); a family never imports another
 * (.dependency-cruiser.cjs).
 */
import type { FastifyInstance } from 'fastify';
import type { Migration } from '../../store/migrate.js';
import type { SeedSection } from '../../seed/seed-file.js';

export interface Family<Deps> {
  /** The family's name: its folder, its scopes', errors' and migrations' owner. */
  readonly name: string;
  /** Its own tables, applied when the store opens, after the store kernel's; ids `<name>/<nnn>-<what>`. */
  readonly migrations?: readonly Migration[];
  /** Its own top-level seed arrays (CONTRACT part 6), checked and applied with the seed file, in this order. */
  readonly seed?: SeedSection | readonly SeedSection[];
  register(app: FastifyInstance, deps: Deps): void | Promise<void>;
}

export const defineFamily = <Deps>(family: Family<Deps>): Family<Deps> => {
  for (const m of family.migrations ?? []) {
    if (!m.id.startsWith(`${family.name}/`)) throw new Error(`migration ${m.id} of ${family.name} must be named ${family.name}/<nnn>-<what>`);
  }
  return family;
};

/** Registers a family in a context of its own: its hooks and parsers stay its own. */
export async function registerFamily<Deps>(app: FastifyInstance, family: Family<Deps>, deps: Deps): Promise<void> {
  await app.register(async (scope) => family.register(scope, deps));
}
