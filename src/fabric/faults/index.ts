/**
 * Fault injection (docs/faults.md), as the rest of the library sees it: the hooks it calls at its
 * injection points (hooks.ts, which runs the plan it is given), and, loaded with them, the sources of
 * the plan in force (sources.ts: this process's own, $SOFTDPU_FAULTS, the plan file of every fabric
 * the thread joined). The plan's format is plan.ts, its files files.ts, the program's API api.ts.
 */
import './sources.js';

export {
  active,
  faultAtStart,
  faultAtSubmit,
  faultBlob,
  faultCaps,
  faultEvent,
  faultStalled,
  faultStalls,
  noteDevice,
  stalledNap,
} from './hooks.js';
export { followFabric, provideStats } from './sources.js';
