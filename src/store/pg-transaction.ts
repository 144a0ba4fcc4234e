/**
 * A transaction on one pg client whose BEGIN and COMMIT travel with its statements rather than
 * each in a round trip of its own. A unit of work was BEGIN, its statements, COMMIT, each awaited
 * in turn, with the row locks of its first statement held until the last answer came back; here
 * BEGIN is written in front of the first statement (nothing at all when no statement runs) and
 * COMMIT behind the statement the caller marks as the last (`queryThenCommit`), each pair in one
 * pipeline of extended-protocol messages closed by one Sync.
 *
 * What a failure does is the protocol's own: after an error the server skips every message up to
 * the Sync, so a COMMIT written behind a statement that fails never runs, and the transaction is
 * left aborted until the ROLLBACK that `rollback` sends. A COMMIT that the server answers with
 * ROLLBACK (a transaction already aborted) is an error here, not a success.
 *
 * Statements that cannot carry a command (no parameters: pg sends them in the simple protocol,
 * which may hold several statements; COPY) run after a BEGIN of their own, and before a COMMIT of
 * its own.
 */
import pg from 'pg';

/** pg's connection, as far as writing a command into a statement's messages uses it. */
interface PgConnection {
  parse(q: { text: string; name?: string; types?: unknown[] }): void;
  bind(config?: object): void;
  execute(config?: { portal?: string; rows?: number }): void;
  sync(): void;
  submittedNamedStatements: Record<string, string>;
}

/** pg 8's Query internals that this query reads (pg-cursor builds on the same). */
interface PgQueryInternals {
  text: string;
  name?: string;
  types?: unknown[];
  portal: string;
  _canceledDueToError: Error | false;
  hasBeenParsed(connection: PgConnection): boolean;
}

/** pg's own Query methods that CarryingQuery extends (not in pg's type declarations). */
const pgQuery = pg.Query.prototype as unknown as {
  prepare(this: pg.Query, connection: PgConnection): void;
  handleCommandComplete(this: pg.Query, msg: unknown, connection: unknown): void;
};

/** A command without parameters or rows (BEGIN, COMMIT): Parse, Bind and Execute, no Sync. */
function writeCommand(connection: PgConnection, text: string): void {
  connection.parse({ text });
  connection.bind({});
  connection.execute({ portal: '' });
}

/**
 * pg's own Query (its results, errors and callbacks unchanged) with commands written before and
 * after its statement, under the statement's one Sync. The commands' answers (ParseComplete,
 * BindComplete, CommandComplete) are not the statement's: their CommandCompletes are taken here,
 * and the one behind it is checked to be the command itself (a COMMIT answered ROLLBACK fails).
 */
class CarryingQuery extends pg.Query {
  private commandsBefore: number;
  private statementDone = false;

  constructor(config: pg.QueryConfig, private readonly before: readonly string[], private readonly after: readonly string[], callback: (err: Error | undefined, res: pg.QueryResult) => void) {
    super({ ...config, queryMode: 'extended' } as pg.QueryConfig, undefined, callback);
    this.commandsBefore = before.length;
  }

  prepare(connection: PgConnection): void {
    const self = this as unknown as PgQueryInternals;
    // pg credits a ParseComplete to the active query's name: the first one must be the statement's
    // own, so a named statement not yet parsed on this connection is parsed ahead of the commands.
    if (this.before.length > 0 && self.name && !self.hasBeenParsed(connection)) {
      connection.parse({ text: self.text, name: self.name, ...(self.types ? { types: self.types } : {}) });
      connection.submittedNamedStatements[self.name] = self.text;
    }
    for (const command of this.before) writeCommand(connection, command);
    pgQuery.prepare.call(this, connection);
  }

  /** pg's Execute then Sync, with the commands after the statement in between. */
  _getRows(connection: PgConnection, rows: number | undefined): void {
    connection.execute({ portal: (this as unknown as PgQueryInternals).portal, ...(rows ? { rows } : {}) });
    for (const command of this.after) writeCommand(connection, command);
    connection.sync();
  }

  handleCommandComplete(msg: { text: string }, connection: unknown): void {
    if (this.commandsBefore > 0) {
      this.commandsBefore--;
      return;
    }
    if (!this.statementDone) {
      this.statementDone = true;
      pgQuery.handleCommandComplete.call(this, msg, connection);
      return;
    }
    const command = this.after[0];
    if (command !== undefined && msg.text !== command) {
      const self = this as unknown as PgQueryInternals;
      self._canceledDueToError ||= new Error(`${command} was answered ${msg.text}`);
    }
  }
}

type Config = { text: string; values?: unknown[]; name?: string };

function carried<T>(client: pg.ClientBase, config: Config, before: readonly string[], after: readonly string[]): Promise<T[]> {
  return new Promise<T[]>((resolve, reject) => {
    const query = new CarryingQuery(config, before, after, (err, res) => (err ? reject(err) : resolve(res.rows as T[])));
    void client.query(query);
  });
}

/** Whether pg sends this statement in the extended protocol, where commands can ride with it. */
const canCarry = (config: Config, params: readonly unknown[] | undefined): boolean =>
  config.name !== undefined || (params !== undefined && params.length > 0);

export interface PgTransaction {
  /** A statement of the transaction; the first one carries the BEGIN. */
  query<T>(config: Config, params: readonly unknown[] | undefined): Promise<T[]>;
  /** The transaction's last statement, carrying the COMMIT: once it resolves, the transaction has committed. */
  queryThenCommit<T>(config: Config, params: readonly unknown[] | undefined): Promise<T[]>;
  /** Makes sure BEGIN was sent (before a statement that cannot carry it: `exec`, `copyIn`). */
  begin(): Promise<void>;
  /** Commits what began, unless a statement already carried the COMMIT; nothing if nothing began. */
  commit(): Promise<void>;
  /** Rolls back what began and did not commit. */
  rollback(): Promise<void>;
}

export function openPgTransaction(client: pg.ClientBase): PgTransaction {
  let begun = false;
  let committed = false;
  const open = (): void => {
    if (committed) throw new Error('the transaction has committed: no statement can follow');
  };
  const begin = async (): Promise<void> => {
    open();
    if (begun) return;
    begun = true;
    await client.query('BEGIN');
  };
  const plain = async <T>(config: Config): Promise<T[]> => (await client.query(config)).rows as T[];

  return {
    async query<T>(config: Config, params: readonly unknown[] | undefined): Promise<T[]> {
      open();
      if (begun) return plain<T>(config);
      if (!canCarry(config, params)) {
        await begin();
        return plain<T>(config);
      }
      begun = true;
      return carried<T>(client, config, ['BEGIN'], []);
    },

    async queryThenCommit<T>(config: Config, params: readonly unknown[] | undefined): Promise<T[]> {
      open();
      if (!canCarry(config, params)) {
        await begin();
        const rows = await plain<T>(config);
        await this.commit();
        return rows;
      }
      const before = begun ? [] : ['BEGIN'];
      begun = true;
      const rows = await carried<T>(client, config, before, ['COMMIT']);
      committed = true;
      return rows;
    },

    begin,

    async commit(): Promise<void> {
      if (!begun || committed) return;
      const result = await client.query('COMMIT');
      if (result.command !== 'COMMIT') throw new Error(`COMMIT was answered ${result.command}`);
      committed = true;
    },

    async rollback(): Promise<void> {
      if (!begun || committed) return;
      // After a failed COMMIT the server has ended the transaction already: this ROLLBACK only warns.
      await client.query('ROLLBACK');
    },
  };
}
