/**
 * The separate thread of `softdpu sample dpa_wait_kernel_launch` (NVIDIA's wait_event_update_thread): a
 * worker that imports the wait event, waits, then sets it to 5.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDeviceByPci } from '../../core/dev.js';
import { useFabric } from '../../fabric/fabric.js';
import { SyncEvent } from '../../sync-event/sync-event.js';

const { pci, blob, delayMs, fabric, topology } = workerData as { pci: string; blob: Uint8Array; delayMs: number; fabric: string; topology: string | undefined };
useFabric({ dir: fabric, ...(topology ? { topology } : {}), sweep: false }); // the sample's fabric, not the environment's
const dev = openDeviceByPci(pci);
const event = SyncEvent.createFromExport(dev, blob);
event.start();
await new Promise((resolve) => setTimeout(resolve, delayMs));
event.updateSet(5n);
event.stop();
event.destroy();
dev.close();
parentPort?.postMessage('set');
