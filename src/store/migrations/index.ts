import * as m001 from './001-initial.js';

/** Ordered migrations; ids never change once released. */
export const migrations: readonly { id: string; sql: string }[] = [{ id: '001-initial', sql: m001.sql }];
