/**
 * `dpa-exit-peer EUS keep|destroy`: starts a DPA with EUS execution units on the DPU's Arm device (the
 * fabric and topology from the environment), prints {"end": epoch ms} once it is done with it, then
 * destroys it or not, and ends. The parent times the rest: from `end` to the process's exit, so that
 * `destroy` pays for its destroy() as `keep` pays for leaving it to the exit.
 */
import { openDeviceByPci } from '../src/core/dev.js';
import { DpaApp } from '../src/dpa/app.js';
import { Dpa } from '../src/dpa/dpa.js';
import { ARM, watchdog } from './peer-lib.js';

watchdog('dpa-exit-peer');
const [, how] = process.argv.slice(2);
const dpa = Dpa.create(openDeviceByPci(ARM));
dpa.setApp(DpaApp.create(new URL('./dpa-apps/rate.js', import.meta.url).href));
dpa.start();
process.stdout.write(JSON.stringify({ end: Date.now() }) + '\n');
if (how === 'destroy') dpa.destroy();
