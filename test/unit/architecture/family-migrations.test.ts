/**
 * The families' tables are listed twice: by each family (its `migrations`, which its name prefixes)
 * and once for the processes that load no routes (src/modules/background.ts). The two lists must be
 * the same, in the families' order, or a worker, `migrate` and `seed` would open a store missing a
 * family's tables (or applying them in another order than the API).
 */
import { describe, expect, it } from 'vitest';
import { families, familyMigrations } from '../../../src/modules/index.js';

describe('the families\' migrations', () => {
  it('are the same apart from the routes as on the families, in their order', () => {
    const onFamilies = families.flatMap((f) => f.migrations ?? []);
    expect(onFamilies.length).toBeGreaterThan(0);
    expect(familyMigrations.map((m) => m.id)).toEqual(onFamilies.map((m) => m.id));
    expect(familyMigrations.every((m, i) => m === onFamilies[i])).toBe(true);
  });
});
