/**
 * The entry of an execution unit's worker thread (eu-pool.ts starts it): loads the EU's code
 * (eu-worker.ts) and runs it. A failure, loading included, is posted on the EU's port as well as thrown:
 * the owner blocked in `start` reads the port between its sleeps, but the worker's 'error' event would
 * reach it only once its event loop turns again, after `start` gave up. So is its exit code (DPA code
 * that calls `process.exit()`): its owner may be blocked in a wait that reads only the port.
 */
import { workerData } from 'node:worker_threads';
import type { EuData, EuMessage } from './eu-worker.js';

const data = (workerData as { softdpuEu: EuData }).softdpuEu;
// DPA code that calls process.exit() ends this thread at once; its owner learns the code from here first.
process.once('exit', (code) => data.port.postMessage({ type: 'exit', code } satisfies EuMessage));
try {
  const { runEu } = await import('./eu-worker.js');
  await runEu(data);
} catch (err) {
  const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  data.port.postMessage({ type: 'error', message: `execution unit ${data.eu} failed: ${what}` } satisfies EuMessage);
  throw err;
}
