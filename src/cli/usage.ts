/**
 * The command line's convention, for every command and every sample: a usage error (what was typed is
 * wrong: an unknown command or option, a missing or unexpected argument, a bad option value) is one line
 * on stderr naming it and where the help is, exit code 2; a runtime failure is one line, exit code 1.
 * Options are parsed here, with node:util's tokens, so that its messages never reach the user.
 */
import { parseArgs } from 'node:util';

/** A usage error of `softdpu <command>` (exit code 2); `command` is '' for softdpu itself. */
export class UsageError extends Error {
  constructor(
    readonly command: string,
    what: string,
    /** Where to look, when not `softdpu <command> --help`. */
    readonly hint = `softdpu${command ? ` ${command}` : ''} --help`,
  ) {
    super(what);
  }

  /** The line the user sees: `softdpu top: unknown option --jsno; see 'softdpu top --help'`. */
  line(): string {
    return `softdpu${this.command ? ` ${this.command}` : ''}: ${this.message}; see '${this.hint}'`;
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** A string option that may be given more than once: every value, in order, is in `lists`. */
  multiple?: boolean;
}

export interface ParsedFlags {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  /** The values of each `multiple` option given, in the order given (its last one is in `values` too). */
  lists: Record<string, string[]>;
  /** `-h`/`--help` was given (when it is one of the options): nothing else was checked. */
  help: boolean;
}

/**
 * Parses `args` against `options`, in our words: `unknown option --jsno`, `--interval needs a value`,
 * `--json takes no value`. A value that looks like an option (`--interval -5`) is refused with the way
 * to write it (`--interval=-5`), as node:util does, so that a forgotten value does not swallow the next
 * option. `-h`/`--help` wins over any error, so that help is always reachable.
 */
export function parseFlags(command: string, args: string[], options: Record<string, OptionSpec>, allowPositionals = true): ParsedFlags {
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const help = 'help' in options && tokens.some((t) => t.kind === 'option' && t.name === 'help');
  const values: ParsedFlags['values'] = {};
  const positionals: string[] = [];
  const lists: ParsedFlags['lists'] = {};
  if (help) return { values, positionals, lists, help };
  for (const token of tokens) {
    if (token.kind === 'positional') {
      if (!allowPositionals) throw new UsageError(command, `unexpected argument ${JSON.stringify(token.value)}`);
      positionals.push(token.value);
    }
    if (token.kind !== 'option') continue;
    const spec = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (!spec) throw new UsageError(command, `unknown option ${token.rawName}`);
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(command, `${token.rawName} takes no value (got ${JSON.stringify(token.value)})`);
      values[token.name] = true;
      continue;
    }
    if (token.value === undefined) throw new UsageError(command, `${token.rawName} needs a value`);
    if (!token.inlineValue && token.value.length > 1 && token.value.startsWith('-')) {
      throw new UsageError(command, `${token.rawName} needs a value (got ${JSON.stringify(token.value)}? write --${token.name}=${token.value})`);
    }
    values[token.name] = token.value;
    if (spec.multiple) (lists[token.name] ??= []).push(token.value);
  }
  return { values, positionals, lists, help };
}

/** The subcommand (the first positional, one of `subs`) and the arguments after it. */
export function subcommand(command: string, positionals: string[], subs: readonly string[]): [string, string[]] {
  const [sub, ...args] = positionals;
  if (sub === undefined) throw new UsageError(command, `missing subcommand (${subs.join(', ')})`);
  if (!subs.includes(sub)) throw new UsageError(command, `unknown subcommand ${JSON.stringify(sub)} (${subs.join(', ')})`);
  return [sub, args];
}

/** Refuses arguments where none belong. */
export function noArguments(command: string, args: readonly string[]): void {
  if (args.length > 0) throw new UsageError(command, `unexpected argument ${JSON.stringify(args[0])}`);
}
