/** The progress loop NVIDIA's samples write by hand, with the bound they lack. */
import { DocaError } from '../../core/error.js';
import type { ProgressEngine } from '../../core/pe.js';
import type { SampleRun } from './common.js';

/**
 * Progresses every engine until `done()`, letting Node's event loop turn whenever nothing happened
 * (connection setup needs it). Throws TIME_OUT, naming `what`, when the sample's timeout passes.
 */
export async function progressUntil(run: SampleRun, engines: ProgressEngine[], done: () => boolean, what: string): Promise<void> {
  while (!done()) {
    if (run.signal.aborted) throw new DocaError('TIME_OUT', run.log.name, `timed out after ${run.timeoutMs / 1000} s waiting for ${what}`);
    let progressed = false;
    for (const pe of engines) while (pe.progress()) progressed = true;
    if (!progressed) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
