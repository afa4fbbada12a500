/**
 * What `softdpu run` supervises: the DPU side's and the host side's commands, each `/bin/sh -c` in a
 * process group of its own (so that stopping one stops what it started), their output prefixed line by
 * line with their side, the first failure's exit status as the outcome. Every way out (all done, a
 * failure, the timeout, a signal to softdpu run) ends the same: the groups still alive get SIGTERM, then
 * SIGKILL after the grace period, and it returns once they are gone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { groupRuns, signalGroup, signalStatus, until } from './run-groups.js';

export type RunSide = 'dpu' | 'host';

export interface Supervised {
  /** Each side's commands, `/bin/sh -c` strings; the DPU side's start first. */
  dpu: readonly string[];
  host: readonly string[];
  /** Every command's environment (SOFTDPU_SIDE is added). */
  env: NodeJS.ProcessEnv;
  /** The host side starts once a line of every DPU command matched this; at once when absent. */
  ready?: RegExp;
  /** Once every host command exited 0, the DPU side is stopped and the run succeeds. */
  untilHost: boolean;
  /** 0: none. */
  timeoutMs: number;
  /** From SIGTERM to SIGKILL. */
  graceMs: number;
  stdout: Writable;
  stderr: Writable;
  /** One line of softdpu run's own ("timed out ..."). */
  say(line: string): void;
}

/** The exit status of a timeout, as timeout(1) has it. */
export const TIMED_OUT = 124;

interface Command {
  label: string;
  side: RunSide;
  text: string;
  child?: ChildProcess;
  /** Its exit status once it exited: the code, or 128 + the signal's number. */
  status?: number;
  ready: boolean;
  /** Its stdout and stderr drained (and their partial last lines written). */
  drained?: Promise<void>;
}

/** `[dpu]` for a side's only command, `[dpu.1]`, `[dpu.2]`... for several. */
function commandsOf(side: RunSide, texts: readonly string[]): Command[] {
  return texts.map((text, i) => ({ label: `[${side}${texts.length > 1 ? `.${i + 1}` : ''}]`, side, text, ready: false }));
}

/**
 * Copies `from` to `to` a line at a time, each line after `prefix`; the partial last line when `from`
 * closes, with a newline. Reading pauses while `to` is full.
 */
function prefixLines(from: Readable, to: Writable, prefix: string, onLine: (line: string) => void): Promise<void> {
  let partial = '';
  let paused = false;
  const put = (line: string) => {
    onLine(line);
    if (!to.write(`${prefix}${line}\n`) && !paused) {
      paused = true;
      from.pause();
      to.once('drain', () => {
        paused = false;
        from.resume();
      });
    }
  };
  from.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) put(line);
  });
  return new Promise((resolve) =>
    from.once('close', () => {
      if (partial) put(partial);
      partial = '';
      resolve();
    }),
  );
}

/** Runs both sides to the end (see the file's comment); resolves with softdpu run's exit status. */
export function supervise(o: Supervised): Promise<number> {
  return new Supervisor(o).run();
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

class Supervisor {
  private readonly dpu: Command[];
  private readonly host: Command[];
  private readonly all: Command[];
  /** The first decision (a failure, the timeout, a signal, --until-host): it stands. */
  private outcome: number | undefined;
  private stopping = false;
  private hostStarted = false;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private finished!: () => void;
  private readonly allExited = new Promise<void>((resolve) => (this.finished = resolve));
  private readonly onSignal = (signal: NodeJS.Signals) => this.signalled(signal);

  constructor(private readonly o: Supervised) {
    this.dpu = commandsOf('dpu', o.dpu);
    this.host = commandsOf('host', o.host);
    this.all = [...this.dpu, ...this.host];
  }

  async run(): Promise<number> {
    for (const s of SIGNALS) process.on(s, this.onSignal);
    if (this.o.timeoutMs > 0) this.timeoutTimer = setTimeout(() => this.timedOut(), this.o.timeoutMs);
    try {
      this.dpu.forEach((c) => this.start(c));
      if (!this.o.ready) this.startHost();
      this.checkFinished();
      await this.allExited;
      await this.reap();
    } finally {
      clearTimeout(this.timeoutTimer);
      clearTimeout(this.graceTimer);
      for (const s of SIGNALS) process.off(s, this.onSignal);
    }
    return this.outcome ?? 0;
  }

  private started(): Command[] {
    return this.all.filter((c) => c.child?.pid !== undefined);
  }

  private running(): Command[] {
    return this.started().filter((c) => c.status === undefined);
  }

  private start(c: Command): void {
    const child = spawn('/bin/sh', ['-c', c.text], { env: { ...this.o.env, SOFTDPU_SIDE: c.side }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    c.child = child;
    child.once('error', (err) => {
      this.o.say(`${c.label} cannot start /bin/sh: ${err.message}`);
      this.onExit(c, 127, null);
    });
    child.once('exit', (code, signal) => this.onExit(c, code, signal));
    c.drained = Promise.all([
      prefixLines(child.stdout!, this.o.stdout, `${c.label} `, (line) => this.onLine(c, line)),
      prefixLines(child.stderr!, this.o.stderr, `${c.label} `, (line) => this.onLine(c, line)),
    ]).then(() => undefined);
  }

  private startHost(): void {
    if (this.hostStarted || this.stopping) return;
    this.hostStarted = true;
    this.host.forEach((c) => this.start(c));
  }

  private onLine(c: Command, line: string): void {
    const ready = this.o.ready;
    if (!ready || c.side !== 'dpu' || c.ready || !ready.test(line)) return;
    c.ready = true;
    if (this.dpu.every((d) => d.ready)) this.startHost();
  }

  private onExit(c: Command, code: number | null, signal: NodeJS.Signals | null): void {
    if (c.status !== undefined) return;
    c.status = code ?? signalStatus(signal ?? 'SIGKILL');
    if (!this.stopping) {
      const others = this.running().map((r) => r.label);
      const stopped = others.length ? `; stopping ${others.join(', ')}` : '';
      if (c.status !== 0) {
        this.stop(c.status, `${c.label} ${signal ? `was killed by ${signal} (${c.status})` : `exited with ${c.status}`}${stopped}`);
      } else if (c.side === 'dpu' && this.o.ready && !c.ready && !this.hostStarted && this.host.length > 0) {
        this.stop(1, `${c.label} exited before a line matched --ready ${JSON.stringify(this.o.ready.source)}; the host side never started${stopped}`);
      } else if (c.side === 'host' && this.o.untilHost && this.host.every((h) => h.status === 0)) {
        this.stop(0, others.length ? `the host side succeeded (--until-host)${stopped}` : undefined);
      }
    }
    this.checkFinished();
  }

  private checkFinished(): void {
    if (this.running().length > 0) return;
    if (this.stopping || this.all.every((c) => c.status !== undefined)) this.finished();
  }

  /** Decides the outcome and stops what still runs with `signal`, then SIGKILL after the grace period. */
  private stop(status: number, line: string | undefined, signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.stopping) return;
    this.stopping = true;
    this.outcome = status;
    if (line) this.o.say(line);
    clearTimeout(this.timeoutTimer);
    for (const c of this.running()) signalGroup(c.child!.pid!, signal);
    this.graceTimer = setTimeout(() => {
      for (const c of this.running()) signalGroup(c.child!.pid!, 'SIGKILL');
    }, this.o.graceMs);
    this.checkFinished();
  }

  private timedOut(): void {
    const still = this.running().map((c) => `${c.label} ${JSON.stringify(c.text)}`);
    if (!this.hostStarted && this.host.length > 0) still.push('[host] (not started: no --ready line yet)');
    this.stop(TIMED_OUT, `timed out after ${this.o.timeoutMs / 1000} s; still running: ${still.join(', ')}; killing them`);
  }

  /** A signal to softdpu run goes to every command; a second one kills them (and what they left) at once. */
  private signalled(signal: NodeJS.Signals): void {
    if (!this.stopping) {
      const to = this.running().map((c) => c.label).join(', ') || 'nobody';
      return this.stop(signalStatus(signal), `received ${signal}; passing it on to ${to}`, signal);
    }
    for (const c of this.started()) if (groupRuns(c.child!.pid!)) signalGroup(c.child!.pid!, 'SIGKILL');
  }

  /**
   * What the commands left in their groups (a server started with &) ends as they did, TERM then KILL;
   * then their output is drained.
   */
  private async reap(): Promise<void> {
    const lingering = () => this.started().filter((c) => groupRuns(c.child!.pid!));
    for (const c of lingering()) signalGroup(c.child!.pid!, 'SIGTERM');
    await until(() => lingering().length === 0, this.o.graceMs);
    for (const c of lingering()) signalGroup(c.child!.pid!, 'SIGKILL');
    await until(() => lingering().length === 0, 2000);
    // The pipes close with the last process that holds them; one that left its group may keep them.
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.started().map((c) => c.drained)), new Promise((resolve) => (bound = setTimeout(resolve, 1000)))]);
    clearTimeout(bound);
    for (const c of this.started()) {
      c.child!.stdout!.destroy();
      c.child!.stderr!.destroy();
    }
  }
}
