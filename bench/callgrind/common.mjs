/**
 * Shared by the callgrind workloads (compare.sh runs them): the operation count from argv
 * (`node WORKLOAD.mjs N [WARMUP]`), a fabric directory of the workload's own (removed at exit), and the
 * package's public entry of the checkout being measured ($SOFTDPU_CHECKOUT, default this file's
 * checkout), so that one workload file runs against an old and a new build. The default topology,
 * with one DPA execution unit (a worker thread) instead of four: under valgrind every thread is slow to
 * start, and the workloads use one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const N = Number(process.argv[2] ?? 20_000);
export const WARMUP = Number(process.argv[3] ?? 2_000);
export const CHECKOUT = resolve(process.env.SOFTDPU_CHECKOUT ?? new URL('../..', import.meta.url).pathname);

const fabric = mkdtempSync('/tmp/sdpu-cg-');
process.env.SOFTDPU_FABRIC = fabric; // before anything opens a device
const arm = [{ pci: '03:00.0' }];
const host = [{ pci: 'b1:00.0', type: 'PF' }, { pci: 'b1:00.2', type: 'VF' }, { pci: 'b1:00.3', type: 'VF' }];
writeFileSync(`${fabric}/topology.json`, JSON.stringify({ caps: { dpa: { numEus: 1 } }, dpus: [{ name: 'bf0', arm, host }] }));
process.env.SOFTDPU_TOPOLOGY = `${fabric}/topology.json`;
process.on('exit', () => rmSync(fabric, { recursive: true, force: true }));

/** The checkout's `dist/src/index.js` (what `import ... from 'softdpu'` loads). */
export const sd = await import(pathToFileURL(`${CHECKOUT}/dist/src/index.js`).href);

export const ARM = '03:00.0';
export const HOST = 'b1:00.0';

/**
 * Runs `op(i)` WARMUP times, then N times between two calls of os.loadavg() (libuv's uv_loadavg, which
 * nothing else here calls: compare.sh has callgrind dump its counts there, so the file of the second
 * part holds the N operations alone). `op` leaves nothing in flight; it may be async. The clock stands
 * still meanwhile: work the code does per millisecond (liveness answers re-read from /proc every 20 ms)
 * would else count as many times as valgrind's slowness and the machine's load make milliseconds.
 */
export async function measure(op) {
  const [now, date] = [performance.now(), Date.now()];
  const clock = [performance.now, Date.now];
  performance.now = () => now;
  Date.now = () => date;
  const run = async (from, to) => {
    for (let i = from; i < to; i++) {
      const p = op(i);
      if (p) await p;
    }
  };
  try {
    await run(0, WARMUP);
    loadavg();
    await run(WARMUP, WARMUP + N);
    loadavg();
  } finally {
    [performance.now, Date.now] = clock;
  }
}

/** Progresses `engines` until `done()`, failing after `limit` rounds (a lost message, not a slow one). */
export function spin(engines, done, limit = 1_000_000) {
  for (let r = 0; !done(); r++) {
    if (r === limit) throw new Error(`still waiting after ${limit} progress rounds`);
    for (const pe of engines) pe.progress();
  }
}

/** A comch server and client in this process, each on its own engine, connected (both RUNNING). */
export async function comchPair(name) {
  const arm = sd.openDeviceByPci(ARM);
  const host = sd.openDeviceByPci(HOST);
  const spe = sd.ProgressEngine.create();
  const cpe = sd.ProgressEngine.create();
  const server = sd.ComchServer.create(arm, sd.openRepresentorByPci(arm, sd.DevinfoRepFilter.NET, HOST), name);
  const client = sd.ComchClient.create(host, name);
  spe.connectCtx(server);
  cpe.connectCtx(client);
  return { arm, host, spe, cpe, server, client };
}

/** Lets the event loop turn (sockets, timers) while progressing `engines`, until `done()`. */
export async function settle(engines, done) {
  while (!done()) {
    for (const pe of engines) pe.progress();
    await new Promise((r) => setImmediate(r));
  }
}
