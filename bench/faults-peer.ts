/**
 * `faults-peer PLAN N ROUNDS`: a comch server and client in this one process on one engine, the client
 * sending N 64-byte messages per round as fast as its queue allows (busy, synchronous progress), under
 * one of three plans, set before anything starts: `none`; `other_kind`, one fault of a kind no hot-path
 * hook handles (the flag is on, the submit and progress hooks are called and return at once); and
 * `unmatched`, faults of the hot-path kinds (again, stall) that select a context that does not exist
 * (every submit and progress call looks and finds nothing). A plan is set once per process, as a real
 * one is: switching it on and off in one process would measure the JIT re-optimizing instead. Each
 * round's rate is per second of this process's CPU time, so time spent descheduled on a busy machine
 * does not count; prints {"rate": median msgs/s}.
 */
import { ComchClient } from '../src/comch/client.js';
import { ComchServer } from '../src/comch/server.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { ProgressEngine } from '../src/core/pe.js';
import { Faults } from '../src/fabric/faults/api.js';
import type { FaultSpec } from '../src/fabric/faults/plan.js';
import { ARM, HOST } from './peer-lib.js';

const [plan, count, rounds] = process.argv.slice(2) as [keyof typeof plans, string, string];
const plans = {
  none: [],
  other_kind: [{ kind: 'corrupt-blob', match: { blob: 'mmap_pci' } }],
  unmatched: [
    { kind: 'again', match: { ctx: 'no_such_context', task: 'send' } },
    { kind: 'stall', match: { ctx: 'no_such_context' } },
  ],
} satisfies Record<string, FaultSpec[]>;
const n = Number(count);
if (plans[plan].length > 0) Faults.add(plans[plan]);
const MSG = new Uint8Array(64).fill(0x61);
const arm = openDeviceByPci(ARM);
const pe = ProgressEngine.create();
const server = ComchServer.create(arm, openRepresentorByPci(arm, DevinfoRepFilter.NET, HOST), 'faults-bench');
const client = ComchClient.create(openDeviceByPci(HOST), 'faults-bench');
let received = 0;
let completed = 0;
let submitted = 0;
let goal = 0;
server.eventMsgRecvRegister(() => received++);
server.taskSendSetConf((t) => t.free(), (t) => t.free(), 16);
client.taskSendSetConf(
  (t) => {
    completed++;
    if (submitted < goal) {
      submitted++;
      t.submit();
    } else t.free();
  },
  (t) => t.free(),
  256,
);
for (const ctx of [server, client]) {
  pe.connectCtx(ctx);
  ctx.setRecvQueueSize(4096);
}
server.start();
client.start();
const conn = await (async () => {
  const ready = client.connected({ timeoutMs: 10_000 });
  await pe.run({ mode: 'busy', until: () => client.state === 'RUNNING' && server.connections.length > 0 });
  return ready;
})();

/** One round's rate per second of CPU time (this thread's work, whatever else the machine runs). */
function round(): number {
  const t0 = process.cpuUsage();
  goal += n;
  for (let i = 0; i < 256 && submitted < goal; i++, submitted++) client.taskSendAllocInit(conn, MSG).submit();
  while (received < goal || completed < goal) pe.progress();
  const used = process.cpuUsage(t0);
  return n / ((used.user + used.system) / 1e6);
}

round(); // warm-up
const rates: number[] = [];
for (let r = 0; r < Number(rounds); r++) rates.push(round());
process.stdout.write(JSON.stringify({ rate: rates.sort((a, b) => a - b)[rates.length >> 1] }) + '\n');
await server.stopTree();
await client.stopAndWait().catch(() => {});
process.exit(0);
