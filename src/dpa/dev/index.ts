/**
 * `softdpu/dpa-dev`: the DPA device API, for DPA application code only (the modules a `Dpa` loads on its
 * execution units). Every function is named after its `doca_dpa_dev_*` call without the prefix, in
 * TypeScript casing (`doca_dpa_dev_comch_consumer_ack` -> `comchConsumerAck`), and takes the u64
 * handles the CPU side's `getDpaHandle()` calls give, as bigints. Importing it anywhere else fails.
 *
 * @module softdpu/dpa-dev
 */
import { workerData } from 'node:worker_threads';
import { DocaError } from '../../core/error.js';

if (!(workerData as { softdpuEu?: unknown } | null)?.softdpuEu) {
  throw new DocaError('NOT_PERMITTED', 'softdpu/dpa-dev', 'the DPA device API is for DPA application code, which a started Dpa loads on its execution units; import it only from such a module');
}

export { CompletionType } from '../cq.js';
export {
  completionAck,
  completionRequestNotification,
  deviceSet,
  DevLogLevel,
  dpaMemory,
  dpaYield,
  dpaYield as yield,
  getCompletion,
  getCompletionImmediate,
  getCompletionType,
  getCompletionUserData,
  log,
  numThreads,
  SubmitFlag,
  threadFinish,
  threadGetLocalStorage,
  threadNotify,
  threadRank,
  threadReschedule,
} from './core.js';
export {
  comchConsumerAck,
  comchConsumerCompletionAck,
  comchConsumerCompletionRequestNotification,
  comchConsumerGetCompletion,
  comchConsumerGetCompletionImm,
  comchConsumerGetCompletionProducerId,
  comchProducerDmaCopy,
  comchProducerIsConsumerEmpty,
  comchProducerPostSendImmOnly,
} from './comch-msgq.js';
export { syncEventGet, syncEventPostWaitGt, syncEventPostWaitNe, syncEventUpdateAdd, syncEventUpdateSet, syncEventWaitGt } from './sync-event.js';
