/** The progress loop NVIDIA's samples write by hand, with the bound they lack. */
import type { ProgressEngine } from '../../core/pe.js';
import { checkTimeout, type SampleRun } from './common.js';

/**
 * Progresses every engine until `done()`, letting Node's event loop turn whenever nothing happened
 * (connection setup needs it). Throws TIME_OUT, naming `what`, when the sample's timeout passes.
 */
export async function progressUntil(run: SampleRun, engines: ProgressEngine[], done: () => boolean, what: string): Promise<void> {
  while (!done()) {
    checkTimeout(run, what);
    if (!progressAll(engines)) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Progresses every engine until none has work; true if any did. */
export function progressAll(engines: ProgressEngine[]): boolean {
  let progressed = false;
  for (const pe of engines) while (pe.progress()) progressed = true;
  return progressed;
}
