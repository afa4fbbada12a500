/**
 * `npm run soak [-- --seconds N]`: the control path, the fast path (a main-thread producer and a worker
 * one) and a sync event at full rate for N seconds (default 60), with every ring and queue position
 * started just below 2^32 so that they wrap within the run, and a fault injected every few seconds
 * through the fabric's plan (`softdpu fault add`): AGAIN at submit on sends, AGAIN on the event's
 * tasks, and the worker's thread crashed (a new one takes over). Beside them a third process runs DPA
 * traffic (bench/soak-dpa.ts: a MsgQ ping-pong with a DPA thread, and kernel launches on another DPA),
 * whose execution units the plan crashes too: each crashed DPA goes fatal, is torn down and started
 * again, and its successor does again what it held. Prints messages sent (completed successfully)
 * against received for each path, the sync event's adds against its value, the DPA's messages and
 * launches sent against answered and completed (and the crashes), and each process's resident memory
 * and segment count at the start and the end; exits 1 on any loss.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type NodeProcess, root, startNode, together, withTempDir } from './lib.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' } } });
const seconds = Number(values.seconds);
if (!(seconds > 0)) throw new Error(`--seconds ${values.seconds} is not a positive number`);

/** Resident memory (KiB) and shared segments (memfd mappings and fds) of a process. */
function footprint(pid: number): { rssKiB: number; segments: number } {
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  let segments = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('/memfd:softdpu')) segments++;
    } catch {
      // closed meanwhile
    }
  }
  return { rssKiB: Number(rss ?? 0), segments };
}

/** The faults injected in turn; `dpa` is the DPA process's pid (its worker threads are the units). */
const faults = (dpa: number) => [
  { kind: 'again', match: { ctx: 'doca_comch_producer', task: 'send' }, probability: 0.05, count: 2000 },
  { kind: 'again', match: { ctx: 'doca_comch_client', task: 'send' }, probability: 0.05, count: 2000 },
  { kind: 'crash', scope: 'thread', match: { thread: 'worker', ctx: 'doca_comch_producer', task: 'send' }, after: 5000 },
  // On the liveness cadence of each unit (every 200 ms): a unit of each DPA dies about a second into the fault.
  { kind: 'crash', scope: 'thread', match: { pid: dpa, thread: 'worker' }, after: 5 },
];

await withTempDir(async (dir) => {
  const env = { SOFTDPU_FABRIC: dir, SOFTDPU_START_POSITION: String(2 ** 32 - 4096) };
  const cli = (args: string[]) => execFileSync(process.execPath, [join(root, 'dist', 'src', 'cli', 'main.js'), ...args, '--fabric', dir], { encoding: 'utf8' });
  const server = startNode('soak-peer', ['server'], undefined, env);
  await server.ready;
  const client = startNode('soak-peer', ['client'], undefined, env);
  await client.ready;
  const dpa = startNode('soak-dpa', [], undefined, env);
  await dpa.ready;
  const pids = (p: NodeProcess[]) => p.map((x) => x.pid);
  await new Promise((r) => setTimeout(r, 1000)); // warmed up
  const start = pids([server, client, dpa]).map(footprint);
  const injected: string[] = [];
  const started = Date.now();
  for (let i = 0; Date.now() - started < seconds * 1000; i++) {
    const plan = faults(dpa.pid);
    const fault = plan[i % plan.length]!;
    cli(['fault', 'add', JSON.stringify(fault)]);
    injected.push(fault.kind + (fault.scope ? ` (${'pid' in fault.match ? 'DPA unit' : fault.scope})` : ''));
    await new Promise((r) => setTimeout(r, Math.min(2000, Math.max(0, seconds * 1000 - (Date.now() - started)))));
    cli(['fault', 'clear']);
    await new Promise((r) => setTimeout(r, Math.min(1000, Math.max(0, seconds * 1000 - (Date.now() - started)))));
  }
  const end = pids([server, client, dpa]).map(footprint);
  client.send('finish\n');
  dpa.send('finish\n');
  const [serverOut, clientOut, dpaOut] = await together([server, client, dpa]);
  const got = JSON.parse(serverOut.trim().split('\n').pop()!) as { control: number; fast: Record<string, number>; outOfOrder: number; value: number };
  const sent = JSON.parse(clientOut.trim().split('\n').pop()!) as { control: number; fast: number; fastMain: number; fastWorkers: number; adds: number; workers: number };
  const dpaTotals = JSON.parse(dpaOut.trim().split('\n').pop()!) as { sent: number; answered: number; outOfOrder: number; resent: number; launched: number; completed: number; relaunched: number; crashes: string[]; dpas: number };
  const received = Object.values(got.fast).reduce((a, b) => a + b, 0);
  const rows = [
    ['control path messages', sent.control, got.control],
    [`fast path messages (main + ${sent.workers} worker producers)`, sent.fast, received],
    ['sync event adds / value', sent.adds, got.value],
    [`DPA MsgQ ping-pong messages (${dpaTotals.resent} sent again)`, dpaTotals.sent, dpaTotals.answered],
    [`DPA kernel launches (${dpaTotals.relaunched} launched again)`, dpaTotals.launched, dpaTotals.completed],
  ] as const;
  process.stdout.write(`\nsoak: ${seconds} s, positions from 2^32 - 4096, faults injected: ${injected.join(', ')}\n`);
  for (const [what, s, r] of rows) process.stdout.write(`  ${what.padEnd(48)} sent ${String(s).padStart(10)}  received ${String(r).padStart(10)}  ${s === r ? 'ok' : 'LOST ' + (s - r)}\n`);
  process.stdout.write(`  out of order: ${got.outOfOrder} (DPA answers: ${dpaTotals.outOfOrder})\n`);
  const reasons = [...new Set(dpaTotals.crashes.map((c) => c.replace(/^.*error on the DPA: /, '').replace(/execution unit \d+/, 'execution unit N').replace(/ \(DOCA_ERROR.*$/, '')))];
  process.stdout.write(`  DPA crashes: ${dpaTotals.crashes.length} over ${dpaTotals.dpas} DPAs started${reasons.length ? `: ${reasons.join('; ')}` : ''}\n`);
  for (const [i, who] of ['server', 'client', 'dpa'].entries()) {
    process.stdout.write(`  ${who}: resident ${start[i]!.rssKiB} -> ${end[i]!.rssKiB} KiB, segments ${start[i]!.segments} -> ${end[i]!.segments}\n`);
  }
  const lost = rows.some(([, s, r]) => s !== r) || got.outOfOrder > 0 || dpaTotals.outOfOrder > 0;
  process.stdout.write(JSON.stringify({ seconds, injected, sent, received: { control: got.control, fast: received, value: got.value }, outOfOrder: got.outOfOrder, dpa: dpaTotals, footprint: { start, end } }) + '\n');
  if (lost) process.exitCode = 1;
});
