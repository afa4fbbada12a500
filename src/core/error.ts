/**
 * DOCA's error codes (doca_error.h, DOCA 3.0) and the one error class every softdpu call throws.
 *
 * This module and `log.ts` are leaves: they import nothing, so the fabric layer below core may use them
 * (see docs/architecture.md, "Layers").
 */

/** `doca_error_t`: every code with its numeric value, in DOCA's order. */
export const DOCA_ERRORS = [
  ['DOCA_SUCCESS', 'Success'],
  ['DOCA_ERROR_UNKNOWN', 'Unknown error'],
  ['DOCA_ERROR_NOT_PERMITTED', 'Operation not permitted'],
  ['DOCA_ERROR_IN_USE', 'Resource already in use'],
  ['DOCA_ERROR_NOT_SUPPORTED', 'Operation not supported'],
  ['DOCA_ERROR_AGAIN', 'Resource temporarily unavailable, try again'],
  ['DOCA_ERROR_INVALID_VALUE', 'Invalid input'],
  ['DOCA_ERROR_NO_MEMORY', 'Memory allocation failure'],
  ['DOCA_ERROR_INITIALIZATION', 'Resource initialization failure'],
  ['DOCA_ERROR_TIME_OUT', 'Timer expired waiting for resource'],
  ['DOCA_ERROR_SHUTDOWN', 'Shut down in process or completed'],
  ['DOCA_ERROR_CONNECTION_RESET', 'Connection reset by peer'],
  ['DOCA_ERROR_CONNECTION_ABORTED', 'Connection aborted'],
  ['DOCA_ERROR_CONNECTION_INPROGRESS', 'Connection in progress'],
  ['DOCA_ERROR_NOT_CONNECTED', 'Not connected'],
  ['DOCA_ERROR_NO_LOCK', 'Unable to acquire required lock'],
  ['DOCA_ERROR_NOT_FOUND', 'Resource not found'],
  ['DOCA_ERROR_IO_FAILED', 'Input/output operation failed'],
  ['DOCA_ERROR_BAD_STATE', 'Bad state'],
  ['DOCA_ERROR_UNSUPPORTED_VERSION', 'Unsupported version'],
  ['DOCA_ERROR_OPERATING_SYSTEM', 'Operating system call failure'],
  ['DOCA_ERROR_DRIVER', 'DOCA driver call failure'],
  ['DOCA_ERROR_UNEXPECTED', 'An unexpected scenario was detected'],
  ['DOCA_ERROR_ALREADY_EXIST', 'Resource already exists'],
  ['DOCA_ERROR_FULL', 'No more space in resource'],
  ['DOCA_ERROR_EMPTY', 'No entry is available in resource'],
  ['DOCA_ERROR_IN_PROGRESS', 'Operation is in progress'],
  ['DOCA_ERROR_TOO_BIG', 'Requested operation too big to be contained'],
  ['DOCA_ERROR_AUTHENTICATION', 'Authentication failure'],
  ['DOCA_ERROR_BAD_CONFIG', 'Configuration is not valid'],
  ['DOCA_ERROR_SKIPPED', 'Result is valid, but some previous output data was dropped'],
] as const;

/** A DOCA status name, e.g. `'DOCA_ERROR_AGAIN'`. */
export type DocaErrorName = (typeof DOCA_ERRORS)[number][0];

/** Name -> numeric value (`DocaErrorCode.DOCA_ERROR_AGAIN === 5`). */
export const DocaErrorCode = Object.freeze(
  Object.fromEntries(DOCA_ERRORS.map(([name], value) => [name, value])) as Record<DocaErrorName, number>,
);

const UNRECOGNIZED = 'unrecognized error code';

/** `doca_error_get_name`: the enum name, or "unrecognized error code" for unknown values. */
export function docaErrorGetName(value: number): string {
  return DOCA_ERRORS[value]?.[0] ?? UNRECOGNIZED;
}

/** `doca_error_get_descr`: DOCA's description, or "unrecognized error code" for unknown values. */
export function docaErrorGetDescr(value: number): string {
  return DOCA_ERRORS[value]?.[1] ?? UNRECOGNIZED;
}

/** Short names accepted wherever a code is expected: `'AGAIN'` for `'DOCA_ERROR_AGAIN'`. */
export type DocaErrorShortName = DocaErrorName extends infer N ? (N extends `DOCA_ERROR_${infer S}` ? S : never) : never;

const BRAND = Symbol.for('softdpu.DocaError');

/**
 * A failed DOCA call (`doca_error_t` other than `DOCA_SUCCESS`). `code` is DOCA's name, `value` its
 * number, `description` DOCA's text; the message names the call and the value that was wrong.
 *
 * `instanceof DocaError` holds across two copies of the package (a global brand, not the prototype).
 *
 * @example
 * ```ts
 * // DOCA: if (doca_task_submit(task) == DOCA_ERROR_AGAIN) retry later
 * try {
 *   task.submit();
 * } catch (err) {
 *   if (!DocaError.is(err, 'AGAIN')) throw err; // err.code === 'DOCA_ERROR_AGAIN', err.value === 5
 * }
 * ```
 */
export class DocaError extends Error {
  readonly code: DocaErrorName;
  readonly value: number;
  readonly description: string;
  /** The DOCA (or softdpu) call that failed, e.g. `'doca_ctx_start'`. */
  readonly call: string;

  constructor(code: DocaErrorName | DocaErrorShortName, call: string, detail: string, options?: { cause?: unknown }) {
    const name = (code.startsWith('DOCA_') ? code : `DOCA_ERROR_${code}`) as DocaErrorName;
    const value = DocaErrorCode[name];
    if (value === undefined) throw new TypeError(`unknown DOCA error code ${JSON.stringify(code)}`);
    const description = docaErrorGetDescr(value);
    super(`${call}: ${detail} (${name}: ${description})`, options);
    this.code = name;
    this.value = value;
    this.description = description;
    this.call = call;
    Object.defineProperty(this, BRAND, { value: true });
  }

  override get name(): string {
    return 'DocaError';
  }

  /** `instanceof DocaError`: true for a DocaError of any copy of softdpu (it checks the brand). */
  static override [Symbol.hasInstance](candidate: unknown): boolean {
    return typeof candidate === 'object' && candidate !== null && (candidate as Record<symbol, unknown>)[BRAND] === true;
  }

  /** True when `err` is a DocaError with the given code (full or short name). */
  static is(err: unknown, code: DocaErrorName | DocaErrorShortName): err is DocaError {
    if (!(err instanceof DocaError)) return false;
    // No template string: a retry loop asks this of every AGAIN, and must not allocate.
    const c = err.code;
    return c === code || (c.length === code.length + 11 && c.startsWith('DOCA_ERROR_') && c.endsWith(code));
  }
}

/** @internal A short description of a wrong argument for error messages: its type, and its value when short. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return value.length <= 40 ? JSON.stringify(value) : `a ${value.length}-character string`;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  if (typeof value === 'function') return 'a function';
  const name = (value as object).constructor?.name;
  return name ? `a ${name}` : 'an object';
}

/** DOCA's closest code for a system call's errno (`err.code`), for what the operating system refused. */
const ERRNO_CODES: Record<string, DocaErrorShortName> = {
  EACCES: 'NOT_PERMITTED',
  EPERM: 'NOT_PERMITTED',
  EROFS: 'NOT_PERMITTED',
  ENOSPC: 'FULL',
  EDQUOT: 'FULL',
  EMFILE: 'FULL',
  ENFILE: 'FULL',
  EEXIST: 'ALREADY_EXIST',
  EADDRINUSE: 'ALREADY_EXIST',
  ENOENT: 'NOT_FOUND',
  ENOTDIR: 'NOT_FOUND',
  ENAMETOOLONG: 'INVALID_VALUE',
  ENOMEM: 'NO_MEMORY',
  EAGAIN: 'AGAIN',
};

/**
 * @internal A DocaError for a failed system call: DOCA's closest code for its errno (OPERATING_SYSTEM
 * when there is none), and a message that names `what` was attempted and the errno ("EROFS: read-only
 * file system"; the syscall and path Node appends are left to `what`).
 */
export function osError(err: unknown, call: string, what: string): DocaError {
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  const text = err instanceof Error ? err.message.replace(/, \w+ '.*'$/s, '') : String(err);
  return new DocaError((errno && ERRNO_CODES[errno]) || 'OPERATING_SYSTEM', call, `${what}: ${text}`, { cause: err });
}
