/**
 * DOCA logging (doca_log.h): levels, application and SDK limits, backends and sources.
 *
 * A line is written by a backend when its level lies between the backend's upper limit (most severe
 * accepted) and lower limit (most verbose accepted) and within the global limits; SDK lines (the
 * library's own) are filtered by the backend's SDK level and the global SDK limit instead. Lines are
 * written synchronously, so nothing is lost when a process dies. The library never writes to stdout.
 *
 * Until the program creates a backend, a default stderr backend prints application lines up to INFO
 * and SDK lines up to WARNING (or the levels in $SOFTDPU_LOG_LEVEL and $SOFTDPU_SDK_LOG_LEVEL), so
 * errors are never silent.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

/** `enum doca_log_level`: a higher number is more verbose. */
export const LogLevel = {
  DISABLE: 10,
  CRIT: 20,
  ERROR: 30,
  WARNING: 40,
  INFO: 50,
  DEBUG: 60,
  TRACE: 70,
} as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

const LEVEL_TAGS: Record<number, string> = { 20: 'CRIT', 30: 'ERR', 40: 'WARN', 50: 'INF', 60: 'DBG', 70: 'TRC' };

/** Parses a level given as a number (`50`) or a name (`info`, `WARNING`, `err`); throws RangeError. */
export function parseLogLevel(text: string | number): LogLevel {
  const n = typeof text === 'number' ? text : Number(text);
  if (Number.isInteger(n) && Object.values(LogLevel).includes(n as LogLevel)) return n as LogLevel;
  const key = String(text).toUpperCase();
  const alias: Record<string, LogLevel> = { ERR: 30, WARN: 40, CRITICAL: 20, DBG: 60, TRC: 70, INF: 50 };
  const found = (LogLevel as Record<string, LogLevel>)[key] ?? alias[key];
  if (found === undefined) {
    throw new RangeError(`log level ${JSON.stringify(text)} is not one of 10,20,...,70 or DISABLE..TRACE`);
  }
  return found;
}


interface Limits {
  lower: LogLevel;
  upper: LogLevel;
  sdk: LogLevel;
}

const envLevel = (name: string, fallback: LogLevel): LogLevel => {
  const v = process.env[name];
  try {
    return v ? parseLogLevel(v) : fallback;
  } catch (err) {
    throw new RangeError(`$${name}: ${(err as Error).message}`);
  }
};

/**
 * The global limits (doca_log_level_set_global_*): setting one sets it on every backend it concerns
 * (application backends for lower and upper, SDK backends for the SDK level), and a backend created
 * later starts with them. DOCA's defaults: INFO and CRIT; INFO for SDK backends.
 */
const global: Limits = { lower: LogLevel.INFO, upper: LogLevel.CRIT, sdk: LogLevel.INFO };

const backends = new Set<LogBackend>();

/**
 * What some backend may write, from every backend's limits: the most verbose application and SDK levels
 * and the most severe application level. A line outside them is dropped without looking at each backend
 * (the library's debug lines on hot paths cost one comparison). Recomputed after any change.
 */
let reach: { lower: number; upper: number; sdk: number } | undefined;

function reachable(): { lower: number; upper: number; sdk: number } {
  if (reach) return reach;
  const r = { lower: 0, upper: Infinity, sdk: 0 };
  for (const b of backends) b.widen(r);
  return (reach = r);
}

/**
 * A log destination (`struct doca_log_backend`).
 *
 * @example
 * ```ts
 * // doca_log_backend_create_with_file_sdk(stderr, &sdk_log); doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_DEBUG);
 * const sdkLog = logBackendCreateWithFileSdk('/tmp/sdk.log');
 * sdkLog.setSdkLevel(LogLevel.DEBUG);
 * ```
 */
export class LogBackend {
  private readonly limits: Limits = { ...global };
  private destroyed = false;

  /** @internal use the `logBackendCreate*` functions. */
  constructor(
    private readonly sink: (line: string) => void,
    private readonly acceptsApp: boolean,
    private readonly acceptsSdk: boolean,
    private readonly onDestroy: () => void = () => {},
    isDefault = false,
  ) {
    backends.add(this);
    if (!isDefault) backends.delete(defaultBackend);
    reach = undefined;
  }

  /** @internal widens `r` (see `reachable`) by what this backend writes. */
  widen(r: { lower: number; upper: number; sdk: number }): void {
    if (this.acceptsApp) {
      r.lower = Math.max(r.lower, this.limits.lower);
      r.upper = Math.min(r.upper, this.limits.upper);
    }
    if (this.acceptsSdk) r.sdk = Math.max(r.sdk, this.limits.sdk);
  }

  /** `doca_log_backend_set_level_lower_limit`: the most verbose application level this backend writes. */
  setLevelLowerLimit(level: LogLevel): void {
    this.limits.lower = parseLogLevel(level);
    reach = undefined;
  }

  /** `doca_log_backend_set_level_upper_limit`: the most severe application level this backend writes. */
  setLevelUpperLimit(level: LogLevel): void {
    this.limits.upper = parseLogLevel(level);
    reach = undefined;
  }

  /** `doca_log_backend_set_sdk_level`: the most verbose SDK level this backend writes. */
  setSdkLevel(level: LogLevel): void {
    this.limits.sdk = parseLogLevel(level);
    reach = undefined;
  }

  /** Removes the backend; later lines no longer reach it. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    backends.delete(this);
    reach = undefined;
    this.onDestroy();
  }

  /** @internal whether a line at `level` (application or SDK) would be written here. */
  accepts(level: LogLevel, sdk: boolean): boolean {
    return sdk ? this.acceptsSdk && level <= this.limits.sdk : this.acceptsApp && level <= this.limits.lower && level >= this.limits.upper;
  }

  /** @internal the global limit `which` changed: the backends it concerns take it. */
  takeGlobal(which: keyof Limits, level: LogLevel): void {
    if (which === 'sdk' ? this.acceptsSdk : this.acceptsApp) this.limits[which] = level;
    reach = undefined;
  }

  /** @internal */
  write(level: LogLevel, sdk: boolean, line: string): void {
    if (!this.accepts(level, sdk)) return;
    try {
      this.sink(line);
    } catch {
      // A failing log sink (closed fd, throwing callback) must not turn a log line into a crash.
    }
  }
}

const stderrSink = (line: string): void => {
  writeSync(2, line);
};

const defaultBackend = new LogBackend(stderrSink, true, true, undefined, true);
defaultBackend.setLevelLowerLimit(envLevel('SOFTDPU_LOG_LEVEL', LogLevel.INFO));
defaultBackend.setSdkLevel(envLevel('SOFTDPU_SDK_LOG_LEVEL', LogLevel.WARNING));

function fileSink(fd: number): (line: string) => void {
  return (line) => {
    writeSync(fd, line);
  };
}

/** `doca_log_backend_create_standard`: application lines to stderr (softdpu never writes to stdout). */
export function logBackendCreateStandard(): LogBackend {
  return new LogBackend(stderrSink, true, false);
}

/** `doca_log_backend_create_with_file`: appends application lines to `path`. */
export function logBackendCreateWithFile(path: string): LogBackend {
  const fd = openSync(path, 'a', 0o600);
  return new LogBackend(fileSink(fd), true, false, () => closeSync(fd));
}

/** `doca_log_backend_create_with_file_sdk`: appends the library's own lines to `path`. */
export function logBackendCreateWithFileSdk(path: string): LogBackend {
  const fd = openSync(path, 'a', 0o600);
  return new LogBackend(fileSink(fd), false, true, () => closeSync(fd));
}

/** `doca_log_backend_create_with_fd` / `_with_fd_sdk`: writes to an open file descriptor (not closed). */
export function logBackendCreateWithFd(fd: number, options: { sdk?: boolean } = {}): LogBackend {
  return new LogBackend(fileSink(fd), !options.sdk, !!options.sdk);
}

/** `doca_log_backend_create_with_buf` / `_with_buf_sdk`: hands each formatted line to `flush`. */
export function logBackendCreateWithBuf(flush: (line: string) => void, options: { sdk?: boolean } = {}): LogBackend {
  return new LogBackend(flush, !options.sdk, !!options.sdk);
}

/** Sets a global limit, and with it that limit of every backend it concerns (including the default one). */
function setGlobal(which: keyof Limits, level: LogLevel): void {
  global[which] = parseLogLevel(level);
  for (const backend of [...backends, defaultBackend]) backend.takeGlobal(which, global[which]);
}

/**
 * `doca_log_level_set_global_lower_limit`: the most verbose application level, set on every backend
 * (`softdpu sample NAME -l 60` shows DEBUG lines); backends created later start with it.
 */
export function logLevelSetGlobalLowerLimit(level: LogLevel): void {
  setGlobal('lower', level);
}

/** `doca_log_level_get_global_lower_limit`. */
export function logLevelGetGlobalLowerLimit(): LogLevel {
  return global.lower;
}

/** `doca_log_level_set_global_upper_limit`: the most severe application level, set on every backend. */
export function logLevelSetGlobalUpperLimit(level: LogLevel): void {
  setGlobal('upper', level);
}

/** `doca_log_level_get_global_upper_limit`. */
export function logLevelGetGlobalUpperLimit(): LogLevel {
  return global.upper;
}

/** `doca_log_level_set_global_sdk_limit`: the most verbose level of the library's own lines, set on every SDK backend. */
export function logLevelSetGlobalSdkLimit(level: LogLevel): void {
  setGlobal('sdk', level);
}

/** `doca_log_level_get_global_sdk_limit`. */
export function logLevelGetGlobalSdkLimit(): LogLevel {
  return global.sdk;
}

function stamp(): string {
  const d = new Date();
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}:${p(d.getMilliseconds(), 3)}`;
}

/**
 * A named log source (`doca_log_register_source`), with DOCA's macros as methods.
 *
 * @example
 * ```ts
 * // DOCA_LOG_REGISTER(ECHO); ... DOCA_LOG_INFO("connected");
 * const log = logRegisterSource('ECHO');
 * log.info('connected');
 * ```
 */
export class LogSource {
  /** @internal use {@link logRegisterSource}. */
  constructor(
    readonly name: string,
    readonly sdk: boolean,
  ) {}

  /** `doca_log`: writes one line at `level` to every backend that accepts it. */
  log(level: LogLevel, message: string): void {
    if (!this.enabled(level)) return;
    const line = `[${stamp()}][${process.pid}][${this.sdk ? 'DOCA' : 'APP'}][${LEVEL_TAGS[level]}][${this.name}] ${message}\n`;
    for (const backend of backends) backend.write(level, this.sdk, line);
  }

  /** True when a line at `level` could reach some backend (to skip formatting costly messages). */
  enabled(level: LogLevel): boolean {
    const r = reachable();
    return level > LogLevel.DISABLE && (this.sdk ? level <= r.sdk : level <= r.lower && level >= r.upper);
  }

  /** `DOCA_LOG_CRIT`. */
  crit(message: string): void {
    this.log(LogLevel.CRIT, message);
  }
  /** `DOCA_LOG_ERR`. */
  err(message: string): void {
    this.log(LogLevel.ERROR, message);
  }
  /** `DOCA_LOG_WARN`. */
  warn(message: string): void {
    this.log(LogLevel.WARNING, message);
  }
  /** `DOCA_LOG_INFO`. */
  info(message: string): void {
    this.log(LogLevel.INFO, message);
  }
  /** `DOCA_LOG_DBG`. */
  dbg(message: string): void {
    this.log(LogLevel.DEBUG, message);
  }
  /** `DOCA_LOG_TRC`. */
  trc(message: string): void {
    this.log(LogLevel.TRACE, message);
  }
}

/** `doca_log_register_source` (`DOCA_LOG_REGISTER`): a source for application lines. */
export function logRegisterSource(name: string): LogSource {
  return new LogSource(name, false);
}

/** @internal the library's own sources log at SDK levels. */
export function sdkLogSource(name: string): LogSource {
  return new LogSource(name, true);
}
