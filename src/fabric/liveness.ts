/**
 * Process identity and liveness. A pid alone is not an identity (pids are reused) and `kill(pid, 0)`
 * is fooled by zombies, so an owner is (pid, start time in clock ticks since boot) read from
 * /proc/<pid>/stat, and a zombie counts as dead.
 */
import { readFileSync } from 'node:fs';

export interface ProcessIdentity {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat. */
  readonly start: number;
}

function readStat(pid: number): { state: string; start: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, start: Number(fields[19]) };
}

/** The identity of a running process, or undefined if it does not exist or is a zombie. */
export function processIdentity(pid: number): ProcessIdentity | undefined {
  const stat = readStat(pid);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return undefined;
  return { pid, start: stat.start };
}

/** This process. */
export const self: ProcessIdentity = processIdentity(process.pid)!;

/** True while the process that had this identity still runs (not a zombie, pid not reused). */
export function isAlive(owner: ProcessIdentity): boolean {
  if (owner.pid === self.pid) return owner.start === self.start;
  const now = processIdentity(owner.pid);
  return now !== undefined && now.start === owner.start;
}
