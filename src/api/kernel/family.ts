/**
 * A route family is one encapsulated fastify plugin on the kernel: its routes
 * with their access declarations and schemas, its scopes and error codes
 * (declared when its module loads), its services and repositories. The API
 * registers each family in one line (server.ts); a family never imports
 * another (.dependency-cruiser.cjs).
 */
import type { FastifyInstance } from 'fastify';

export interface Family<Deps> {
  /** The family's name: its folder, its scopes' and errors' owner. */
  readonly name: string;
  register(app: FastifyInstance, deps: Deps): void | Promise<void>;
}

export const defineFamily = <Deps>(family: Family<Deps>): Family<Deps> => family;

/** Registers a family in a context of its own: its hooks and parsers stay its own. */
export async function registerFamily<Deps>(app: FastifyInstance, family: Family<Deps>, deps: Deps): Promise<void> {
  await app.register(async (scope) => family.register(scope, deps));
}
