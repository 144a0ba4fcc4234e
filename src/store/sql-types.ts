/**
 * The SQL client interface every repository is written against (sql.ts opens one): its own file so
 * that each connection's module (sql.ts for Postgres, pglite-thread.ts for PGlite) imports it
 * without importing the other.
 */
export interface Sql {
  readonly kind: 'pglite' | 'postgres';
  /**
   * `options.prepare` names a statement run often with this same text: on Postgres each connection
   * parses and plans it once (a named prepared statement) rather than on every call.
   */
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /** Runs several `;`-separated statements without parameters (migrations). */
  exec(text: string): Promise<void>;
  /**
   * Postgres only: `COPY ... FROM STDIN` (`text`) of rows already in COPY's format (text or binary,
   * as `text` says), written as they are (copy-in.ts); resolves to the rows copied. PGlite has
   * none: its callers write with statements.
   */
  copyIn?(text: string, rows: readonly Buffer[]): Promise<number>;
  /**
   * Inside a transaction: `query` as the transaction's last statement, committing it; once it
   * resolves the transaction has committed, and no statement may follow. It must be the last thing
   * the transaction's function does: on Postgres the COMMIT travels with the statement (one round
   * trip; a statement that fails leaves it unrun, and the transaction rolls back); on PGlite the
   * transaction commits as usual once the function resolves. Outside a transaction: `query`.
   */
  queryThenCommit<T = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /**
   * Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. On Postgres
   * BEGIN travels with the transaction's first statement (see pg-transaction.ts).
   */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` for each NOTIFY on `channel` (a plain identifier), and once more each time a
   * lost listening connection is back (what was sent meanwhile is lost); `onDown` when it is lost.
   * Resolves once listening; the function it resolves to stops listening. Not available inside a
   * transaction.
   */
  listen(channel: string, onNotify: () => void, onDown?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface QueryOptions {
  /** A name unique to this statement's text (see Sql.query). */
  prepare?: string;
  /**
   * A bulk statement (large records written or read): on the embedded store it waits behind the
   * statements not so marked (event-loop.ts turnGate). Postgres runs statements side by side.
   */
  background?: boolean;
}
