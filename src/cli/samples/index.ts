/** The samples `softdpu sample NAME` runs. */
import { comchCtrlPathClient, comchCtrlPathServer } from './comch-ctrl-path.js';
import { comchDataPathClient, comchDataPathServer } from './comch-data-path.js';
import type { SampleSpec } from './common.js';
import { comchMsgqDpaPingpong, dpaWaitKernelLaunch } from './dpa.js';
import { syncEventLocalPci, syncEventRemotePci } from './sync-event-pci.js';

export const SAMPLES: Record<string, SampleSpec> = Object.fromEntries([comchCtrlPathServer, comchCtrlPathClient, comchDataPathServer, comchDataPathClient, syncEventLocalPci, syncEventRemotePci, dpaWaitKernelLaunch, comchMsgqDpaPingpong].map((s) => [s.name, s]));
