/** The samples `softdpu sample NAME` runs, and `softdpu sample --list`. */
import { comchCtrlPathClient, comchCtrlPathServer } from './comch-ctrl-path.js';
import { comchDataPathClient, comchDataPathServer } from './comch-data-path.js';
import { COMMON_FLAGS, flagRows, type SampleSpec } from './common.js';
import { comchMsgqDpaPingpong, dpaWaitKernelLaunch } from './dpa.js';
import { syncEventLocalPci, syncEventRemotePci } from './sync-event-pci.js';

export const SAMPLES: Record<string, SampleSpec> = Object.fromEntries([comchCtrlPathServer, comchCtrlPathClient, comchDataPathServer, comchDataPathClient, syncEventLocalPci, syncEventRemotePci, dpaWaitKernelLaunch, comchMsgqDpaPingpong].map((s) => [s.name, s]));

/** What `softdpu sample --list` prints: each sample with its own flags, then the flags every sample takes. */
export function sampleList(): string {
  const samples = Object.values(SAMPLES).map((s) => [`${s.name}: ${s.description}`, ...flagRows(s.flags, '    ')].join('\n'));
  return `usage: softdpu sample NAME [flags] (NAME -h: its help)\n\n${samples.join('\n\n')}\n\nflags of every sample:\n${flagRows(COMMON_FLAGS, '    ').join('\n')}\n`;
}
