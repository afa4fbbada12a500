/** What this process holds, for leak checks. */
import { readdirSync, readlinkSync } from 'node:fs';

/**
 * This process's open fds (their targets, sorted), but for the process-wide table of DPA-usable memory
 * maps (core/dpa-maps.ts), which lives as long as the process.
 */
export function openFds(): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (!target.startsWith('/memfd:softdpu.dpamaps.')) out.push(target);
    } catch {
      // closed meanwhile (or the directory's own fd)
    }
  }
  return out.sort();
}
