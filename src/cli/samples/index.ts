/** The samples `softdpu sample NAME` runs. */
import { comchCtrlPathClient, comchCtrlPathServer } from './comch-ctrl-path.js';
import type { SampleSpec } from './common.js';

export const SAMPLES: Record<string, SampleSpec> = Object.fromEntries([comchCtrlPathServer, comchCtrlPathClient].map((s) => [s.name, s]));
