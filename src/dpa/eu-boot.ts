/**
 * The entry of an execution unit's worker thread (eu-pool.ts starts it): loads the EU's code
 * (eu-worker.ts) and runs it. A failure, loading included, is posted on the EU's port as well as thrown:
 * the owner blocked in `start` reads the port between its sleeps, but the worker's 'error' event would
 * reach it only once its event loop turns again, after `start` gave up.
 */
import { workerData } from 'node:worker_threads';
import type { EuData, EuMessage } from './eu-worker.js';

const data = (workerData as { softdpuEu: EuData }).softdpuEu;
try {
  const { runEu } = await import('./eu-worker.js');
  await runEu(data);
} catch (err) {
  const what = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  data.port.postMessage({ type: 'error', message: `execution unit ${data.eu} failed: ${what}` } satisfies EuMessage);
  throw err;
}
