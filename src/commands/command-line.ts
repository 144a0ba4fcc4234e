/**
 * The command line's grammar, one parser for every command: `node:util` parseArgs in strict mode,
 * so an unknown flag or a missing value is refused (with the flags the command knows) instead of
 * being ignored. A flag that names an environment variable is the same setting as that variable
 * and wins over it: the parser returns the variables the flags set, and the caller hands
 * `{...process.env, ...env}` to the one configuration reader (config/config.ts).
 */
import { parseArgs } from 'node:util';

export interface OptionSpec {
  type: 'string' | 'boolean';
  description: string;
  /** The value's name in the help text (`--port N`). */
  value?: string;
  multiple?: boolean;
  default?: string | string[];
  /** The environment variable this flag sets (the flag wins). */
  env?: string;
}

export interface CommandSpec {
  name: string;
  summary: string;
  positionals?: readonly { name: string; description: string }[];
  options: Readonly<Record<string, OptionSpec>>;
  /** Lines printed after the options in `--help`. */
  notes?: readonly string[];
}

export type CommandLine =
  | { kind: 'help'; text: string }
  | { kind: 'version' }
  | {
      kind: 'run';
      command: CommandSpec;
      values: Record<string, string | boolean | string[] | undefined>;
      positionals: string[];
      /** Environment variables set by flags. */
      env: Record<string, string>;
    };

/** A command line that names no command, an unknown one, or flags the command does not know: exit 2 with this message. */
export class UsageError extends Error {
  readonly code = 'USAGE';
}

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

function optionLine(name: string, o: OptionSpec): string {
  const flag = `--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`;
  const extras = [
    o.default !== undefined && !(Array.isArray(o.default) && o.default.length === 0) ? `default ${Array.isArray(o.default) ? o.default.join(',') : o.default}` : undefined,
    o.env ? `env ${o.env}` : undefined,
    o.multiple ? 'repeatable' : undefined,
  ].filter((x) => x !== undefined);
  return `  ${flag.padEnd(24)} ${o.description}${extras.length > 0 ? ` (${extras.join('; ')})` : ''}`;
}

export function commandHelp(c: CommandSpec): string {
  const args = (c.positionals ?? []).map((p) => ` ${p.name}`).join('');
  const lines = [`usage: logdrain ${c.name}${args}${Object.keys(c.options).length > 0 ? ' [options]' : ''}`, '', c.summary];
  if (c.positionals && c.positionals.length > 0) lines.push('', ...c.positionals.map((p) => `  ${p.name.padEnd(24)} ${p.description}`));
  lines.push('', 'options:', ...Object.entries(c.options).map(([n, o]) => optionLine(n, o)), optionLine('help', { type: 'boolean', description: 'print this help' }));
  if (c.notes) lines.push('', ...c.notes);
  return lines.join('\n');
}

export function overview(commands: readonly CommandSpec[]): string {
  return [
    'usage: logdrain <command> [options]',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`),
    '',
    '  logdrain <command> --help   the command\'s options',
    '  logdrain --version          version and commit',
    '',
    'Configuration comes from the environment (README, Configuration); a flag that names a variable wins over it.',
  ].join('\n');
}

const known = (c: CommandSpec): string => ['--help', ...Object.keys(c.options).map((n) => `--${n}`)].join(', ');

export function parseCommandLine(argv: readonly string[], commands: readonly CommandSpec[]): CommandLine {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError(`no command given\n\n${overview(commands)}`);
  if (first === '--help' || first === '-h' || first === 'help') {
    const about = first === 'help' ? rest[0] : undefined;
    const command = about === undefined ? undefined : commands.find((c) => c.name === about);
    if (about !== undefined && !command) throw new UsageError(`unknown command: ${about}\n\n${overview(commands)}`);
    return { kind: 'help', text: command ? commandHelp(command) : overview(commands) };
  }
  if (first === '--version' || first === '-v' || first === 'version') return { kind: 'version' };
  const command = commands.find((c) => c.name === first);
  if (!command) throw new UsageError(`unknown command: ${first}\n\n${overview(commands)}`);

  let parsed;
  try {
    parsed = parseArgs({
      args: [...rest],
      strict: true,
      allowPositionals: (command.positionals?.length ?? 0) > 0,
      options: {
        ...HELP,
        ...Object.fromEntries(Object.entries(command.options).map(([n, o]) => [n, { type: o.type, ...(o.multiple ? { multiple: true } : {}), ...(o.default !== undefined ? { default: o.default } : {}) }])),
      },
    });
  } catch (e) {
    const message = (e as Error).message.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '');
    throw new UsageError(`logdrain ${command.name}: ${message}\nknown options: ${known(command)} (logdrain ${command.name} --help)`);
  }
  if (parsed.values.help === true) return { kind: 'help', text: commandHelp(command) };
  const expected = command.positionals?.length ?? 0;
  if (parsed.positionals.length > expected) {
    throw new UsageError(`logdrain ${command.name}: unexpected argument ${JSON.stringify(parsed.positionals[expected])} (logdrain ${command.name} --help)`);
  }
  if (parsed.positionals.length < expected) {
    throw new UsageError(`logdrain ${command.name}: ${command.positionals![parsed.positionals.length]!.name} is required (logdrain ${command.name} --help)`);
  }
  const all = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const env: Record<string, string> = {};
  for (const [name, o] of Object.entries(command.options)) {
    // Only a flag actually given sets its variable: a flag's default never hides the environment's value.
    if (o.env && rest.some((a) => a === `--${name}` || a.startsWith(`--${name}=`))) {
      const v = all[name];
      if (typeof v === 'string') env[o.env] = v;
    }
  }
  const { help: _help, ...values } = all;
  return { kind: 'run', command, values, positionals: parsed.positionals, env };
}
