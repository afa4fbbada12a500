/**
 * Process groups, as `softdpu run` uses them: each command leads a group of its own, and a group is
 * signalled and watched as one (what a command started goes with it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';

/** 128 + the signal's number, as shells report a command a signal ended. */
export function signalStatus(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** Sends `signal` to the process group `pgid`; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a process of group `pgid` still runs. A zombie (dead, not reaped yet by whoever inherited it)
 * answers kill(2) too, but is gone for our purpose: where init reaps slowly or never, it would hold the
 * run up to the end of every bound.
 */
export function groupRuns(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  return pids.some((pid) => {
    try {
      // pid (comm) state ppid pgrp ...: the comm may hold spaces and parentheses, so after the last ')'.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(pgrp) === pgid && state !== 'Z' && state !== 'X';
    } catch {
      return false;
    }
  });
}

/**
 * Resolves once `done()` holds or `ms` passed. There is no event for a process group's end (its
 * members are not our children), so it is looked at every 20 ms.
 */
export function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  return new Promise((resolve) => {
    const look = () => (done() || performance.now() >= deadline ? resolve() : setTimeout(look, 20));
    look();
  });
}
