/**
 * The kill matrix (issue 11): either side (the DPU's comch server, the host's comch client), as a whole
 * process or as a worker thread, killed at each point of connect, control-path send, fast-path send,
 * consumer post, stop and disconnect. Afterwards nothing hangs, nothing leaks, and every message whose
 * send completed OK is received. Each cell runs two fixture processes (test/fixtures/kill-node.ts) in a
 * fabric of its own; cells run two at a time (CONCURRENCY).
 *
 * How the victim dies (V: the victim side, S: the survivor; "fault" is a `crash` of the fault plan in
 * $SOFTDPU_FAULTS, scope process, or scope thread with `thread: worker`):
 *
 * | point      | V does                                       | process victim dies by          | thread victim (a worker) dies by      | V's worker holds    |
 * |------------|----------------------------------------------|---------------------------------|---------------------------------------|---------------------|
 * | connect    | starts; dies after its first handshake frame | itself: SIGKILL after the write | itself: process.exit(1) after it      | the whole side      |
 * |            | (client: HELLO; server: WELCOME)             |                                 |                                       |                     |
 * | send       | sends control messages, 4 in flight          | fault: crash at the 13th send   | fault: crash (thread) at the 13th     | the whole side      |
 * |            |                                              | submit of its comch context     |                                       |                     |
 * | fp-send    | a producer sends to S's consumer (8 buffers) | fault: crash at the 21st        | fault: crash (thread) at the 21st     | the producer        |
 * |            |                                              | producer send submit            |                                       |                     |
 * | post       | a consumer (4 buffers) reposts each receive; | fault: crash at the 15th        | fault: crash (thread) at the 15th     | the consumer        |
 * |            | S's producer sends to it                     | post_recv submit                |                                       |                     |
 * | stop       | sends; after 10 completed sends, stop()      | itself: SIGKILL right after     | itself: process.exit(1) right after   | the whole side      |
 * |            |                                              | stop() returned                 |                                       |                     |
 * | disconnect | server V: after 10 sent, disconnect(conn);   | an external kill -9 (the test)  | itself: process.exit(1) right there   | the whole side      |
 * |            | client V: S disconnects it after 10 received,| while V is frozen right there   |                                       |                     |
 * |            | V dies as it leaves RUNNING                  | (V prints `marker` and blocks)  |                                       |                     |
 *
 * What every cell checks:
 * - The victim died at that point: SIGKILL (process) or its worker ended with code 1 (thread).
 * - No hang: S's waits end within a bound with DOCA errors. Where V's death ends the connection (every
 *   process victim; thread victims holding the whole side), S sees the end (`conn-ended`: the server's
 *   disconnect event, or the client leaving RUNNING by itself, its held sends failed with
 *   CONNECTION_RESET or NOT_CONNECTED). S's client waiting to connect at `connect` gets its answer
 *   (connected, or TIME_OUT / a handshake error) within its 3 s bound.
 * - No leak: S then stops its whole tree (stopTree, each endpoint stopAndWait) and destroys everything
 *   within 10 s: no error, every context reaches IDLE, and its process holds no fd and no mapped
 *   softdpu segment more than before it made its engine. A server S is still RUNNING when told to
 *   finish (a client's death never stops a server). After both processes ended, S left no socket in the
 *   fabric directory, `softdpu fabric clean` leaves nothing of either process there, and /dev/shm holds
 *   nothing of them (segments are memfds).
 * - Delivery: every message V's send callbacks reported OK before it died (control path, and fast path
 *   at fp-send) is among those S received; what S received is 0, 1, 2... exactly (no gap, duplicate or
 *   reordering).
 * - Victim as receiver: each message S sent has exactly one outcome (completed OK, or failed with a DOCA
 *   error), S's sends are numbered without gaps, and everything V reported received was completed OK at
 *   S, in order from 0. S's completed sends V never reported are allowed to be lost: V died holding them
 *   (its queue, or at `post` its consumer, is what died).
 *
 * Extra, for a thread victim whose worker held only the producer (fp-send) or the consumer (post): its
 * process and its connection live on. The control path keeps working both ways (each side's 50 control
 * messages all arrive, nothing lost: nobody who receives them died); at post, S sees the consumer's
 * expiry and its producer stops with NOT_CONNECTED (sends completed into the dead consumer are lost with
 * it); at fp-send, S's consumer gets every send the dead producer completed and stays RUNNING. And for
 * every thread victim, V's process, once told to finish, holds no fd and no segment more than before the
 * worker began: a dead worker leaks nothing into its process.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { entryOwner } from '../src/fabric/names.js';
import type { KillEnd, KillOptions, KillPoint } from './fixtures/kill-node.js';
import { type Child, runCli, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';
import { until } from './helpers/wait.js';

type Side = 'server' | 'client';
type Kind = 'process' | 'thread';

const POINTS: KillPoint[] = ['connect', 'send', 'fp-send', 'post', 'stop', 'disconnect'];
/** Bound on each wait of a cell: far beyond what one step takes (cells take 2-5 s under load in all). */
const WAIT_MS = 20_000;
/** Bound on all the waits of a cell together; the cell's own timeout is above it (room for the cleanup). */
const CELL_MS = 90_000;
/** Cells at once: each runs two processes (and workers), busy while they exchange: no more than the 2 CPUs. */
const CONCURRENCY = 2;

/** A cell's bound for its next wait: WAIT_MS, or what is left of its CELL_MS (which starts now). */
function budget(): () => number {
  const deadline = performance.now() + CELL_MS;
  return () => {
    const left = deadline - performance.now();
    if (left <= 0) throw new Error(`the cell's waits took all of their ${CELL_MS} ms`);
    return Math.min(WAIT_MS, left);
  };
}

/** Control messages each side sends at fp-send and post (kill-node.ts CTL_MESSAGES). */
const CTL_MESSAGES = 50;
/** The codes an ended connection gives a wait or a send. */
const ENDED = ['DOCA_ERROR_CONNECTION_RESET', 'DOCA_ERROR_NOT_CONNECTED'];

/** The fault plan of a victim that dies at a submit. */
function planFor(point: KillPoint, side: Side, kind: Kind): string | undefined {
  const at: Partial<Record<KillPoint, { ctx: string; task: string; after: number }>> = {
    send: { ctx: side === 'server' ? 'doca_comch_server' : 'doca_comch_client', task: 'send', after: 12 },
    'fp-send': { ctx: 'doca_comch_producer', task: 'send', after: 20 },
    post: { ctx: 'doca_comch_consumer', task: 'post_recv', after: 14 },
  };
  const f = at[point];
  if (!f) return undefined;
  const thread = kind === 'thread';
  return JSON.stringify({
    faults: [{ kind: 'crash', ...(thread ? { scope: 'thread' } : {}), match: { ctx: f.ctx, task: f.task, ...(thread ? { thread: 'worker' } : {}) }, after: f.after }],
  });
}

/** Numbers from the lines of `child` matching `re` (group 1), in order. */
const seqs = (child: Child, re: RegExp): number[] => child.lines.flatMap((l) => {
  const m = re.exec(l);
  return m ? [Number(m[1])] : [];
});

/** `list` is exactly 0, 1, 2, ... */
function assertCounting(list: number[], what: string): void {
  list.forEach((s, i) => assert.equal(s, i, `${what}: not 0, 1, 2...: ${JSON.stringify(list)}`));
}

function assertSubset(part: number[], whole: number[], what: string): void {
  const set = new Set(whole);
  const missing = part.filter((s) => !set.has(s));
  assert.deepEqual(missing, [], `${what}: ${JSON.stringify(missing)} missing from ${JSON.stringify(whole)}`);
}

/** Each send of `child` on `chan` has exactly one outcome, and the sends are numbered 0, 1, 2... */
function assertOneOutcomeEach(child: Child, chan: 'ctl' | 'fp', what: string): void {
  const outcomes = seqs(child, new RegExp(`^(?:sent|send-error) ${chan} (?:\\S+ )?(\\d+)$`)).sort((a, b) => a - b);
  assertCounting(outcomes, `${what}: outcomes of the ${chan} sends`);
}

async function within<T>(p: Promise<T>, what: string, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}


const tail = (c: Child) => `stdout ${JSON.stringify(c.lines.slice(-12))}; stderr ${c.stderr.join('').slice(-3000)}`;

/** Waits (each wait bounded by `left()`) for the `end` report of a side told to finish, and for it to exit 0. */
async function finish(c: Child, who: string, left: () => number): Promise<KillEnd> {
  c.send('finish');
  const m = await c.waitFor(/^end (.*)$/, left()).catch((err: Error) => assert.fail(`${who} did not finish: ${err.message}`));
  const exit = await within(c.exited, `${who} to exit`, left());
  assert.deepEqual(exit, { code: 0, signal: null }, `${who} exited with ${exit.code ?? exit.signal}: ${tail(c)}`);
  return JSON.parse(m[1]!) as KillEnd;
}

function assertNoLeak(end: KillEnd, who: string): void {
  assert.deepEqual(end.errors, [], `${who} could not stop and destroy everything`);
  assert.deepEqual(end.extraFds, [], `${who} holds fds it did not hold before`);
  assert.deepEqual(end.extraMappings, [], `${who} maps softdpu segments it did not map before`);
}

const ownedBy = (dir: string, pids: number[]) => readdirSync(dir).filter((n) => pids.includes(entryOwner(n)?.pid ?? -1));
const shmOf = (pids: number[]) => (existsSync('/dev/shm') ? readdirSync('/dev/shm').filter((n) => n.includes('softdpu') && pids.some((p) => n.includes(String(p)))) : []);

async function runCell(t: TestContext, point: KillPoint, victimSide: Side, kind: Kind): Promise<void> {
  const dir = tempFabricDir(t);
  const before = readdirSync(dir);
  const plan = planFor(point, victimSide, kind);
  const spawn = (side: Side) => {
    const o: KillOptions = { side, role: side === victimSide ? 'victim' : 'survivor', point, kind, name: 'kill-matrix' };
    const env: Record<string, string> = { SOFTDPU_FABRIC: dir };
    if (side === victimSide && plan) env.SOFTDPU_FAULTS = plan;
    return spawnChild(t, 'kill-node', [JSON.stringify(o)], { env });
  };
  const server = spawn('server');
  const client = spawn('client');
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    await checkCell(t, dir, before, plan, point, victimSide, kind, server, client);
  } catch (err) {
    // Everything both sides said, with when: how a cell failed under load is read from this.
    const log = (c: Child, who: string) => `--- ${who} (pid ${c.pid}, ${c.lines.length} lines) stdout:\n${c.story()}\n--- ${who} stderr:\n${c.stderr.join('').slice(-4000)}`;
    const cpu = process.cpuUsage(cpu0);
    const self = `this test process over the cell's ${Math.round(performance.now() - t0)} ms: event loop delay max ${Math.round(lag.max / 1e6)} ms, CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms`;
    if (err instanceof Error) err.message += `\n${self}\n${log(server, 'server')}\n${log(client, 'client')}`;
    throw err;
  } finally {
    lag.disable();
  }
}

async function checkCell(t: TestContext, dir: string, before: string[], plan: string | undefined, point: KillPoint, victimSide: Side, kind: Kind, server: Child, client: Child): Promise<void> {
  const left = budget();
  const [victim, survivor] = victimSide === 'server' ? [server, client] : [client, server];
  const survivorSide: Side = victimSide === 'server' ? 'client' : 'server';
  const V = `the victim (${victimSide}, pid ${victim.pid})`;
  const S = `the survivor (${survivorSide}, pid ${survivor.pid})`;
  /** Where the victim's death ends the connection: all but a worker holding one endpoint. */
  const endsConnection = kind === 'process' || (point !== 'fp-send' && point !== 'post');

  // 1. The victim dies at its point.
  if (kind === 'process') {
    if (point === 'disconnect') {
      await victim.waitFor(/^marker$/, left());
      victim.kill('SIGKILL');
    }
    const exit = await within(victim.exited, `${V} to die`, left());
    assert.deepEqual(exit, { code: null, signal: 'SIGKILL' }, `${V}: ${tail(victim)}`);
  } else {
    await victim.waitFor(/^worker-exit 1$/, left());
  }
  if (plan) {
    // Its last words (stderr, a pipe of its own) may still be on their way.
    await until(
      () => /\[WARN\]\[faults\] fault env-1 \(crash\)/.test(victim.stderr.join('')),
      () => `${V} to say it dies by its fault plan: ${tail(victim)}`,
      left(),
    );
  }

  // 2. The survivor sees it, within a bound.
  if (point === 'connect' && survivorSide === 'client') {
    const result = (await survivor.waitFor(/^connect-result (\S+)$/, left()))[1]!;
    assert.ok(['ok', 'DOCA_ERROR_TIME_OUT', 'DOCA_ERROR_CONNECTION_ABORTED', 'DOCA_ERROR_NOT_FOUND', ...ENDED].includes(result), `${S}'s wait to connect ended with ${result}`);
    if (result === 'ok') await survivor.waitFor(/^conn-ended /, left());
  } else if (point !== 'connect' && endsConnection) {
    const how = (await survivor.waitFor(/^conn-ended (\S+)$/, left()))[1]!;
    if (survivorSide === 'client') assert.ok(ENDED.includes(how), `${S}'s connection ended with ${how}`);
  }
  if (point === 'post') await survivor.waitFor(/^producer-done /, left());
  if (!endsConnection) {
    // The victim's process and connection live on: the control path still carries everything.
    await until(
      () => seqs(survivor, /^recv ctl (\d+)$/).length >= CTL_MESSAGES && seqs(victim, /^recv ctl (\d+)$/).length >= CTL_MESSAGES,
      () => `both sides to receive the other's ${CTL_MESSAGES} control messages: ${S} ${seqs(survivor, /^recv ctl (\d+)$/).length}, ${V} ${seqs(victim, /^recv ctl (\d+)$/).length}`,
      left(),
    );
    if (point === 'post') {
      await survivor.waitFor(/^expired \d+$/, left());
      assert.match(survivor.lines.find((l) => l.startsWith('producer-done '))!, /^producer-done DOCA_ERROR_NOT_CONNECTED$/);
    } else {
      const sent = seqs(victim, /^sent fp (\d+)$/);
      await until(
        () => seqs(survivor, /^recv fp (\d+)$/).length >= sent.length,
        () => `${S} to receive the ${sent.length} fast-path sends the dead producer completed`,
        left(),
      );
    }
  }

  // 3. Both stop and destroy everything they hold.
  const survivorEnd = await finish(survivor, S, left);
  assertNoLeak(survivorEnd, S);
  if (survivorSide === 'server') assert.equal(survivorEnd.state, 'RUNNING', `${S} kept serving`);
  if (!endsConnection) {
    assert.deepEqual(survivorEnd.endpoints.map((e) => e.split(':')[1]), ['IDLE'], `${S}'s endpoint stopped`);
  }
  if (kind === 'thread') assertNoLeak(await finish(victim, V, left), `${V}, whose worker died,`);

  // 4. Delivery.
  for (const chan of ['ctl', 'fp'] as const) {
    const received = seqs(survivor, new RegExp(`^recv ${chan} (\\d+)$`));
    assertCounting(received, `what ${S} received (${chan})`);
    assertSubset(seqs(victim, new RegExp(`^sent ${chan} (\\d+)$`)), received, `${V}'s completed ${chan} sends, received by ${S}`);
    assertOneOutcomeEach(survivor, chan, S);
    const victimGot = seqs(victim, new RegExp(`^recv ${chan} (\\d+)$`));
    assertCounting(victimGot, `what ${V} received (${chan})`);
    assertSubset(victimGot, seqs(survivor, new RegExp(`^sent ${chan} (\\d+)$`)), `what ${V} received, completed OK at ${S} (${chan})`);
  }
  if (!endsConnection) {
    assert.equal(seqs(victim, /^recv ctl (\d+)$/).length, CTL_MESSAGES, `${V}'s main thread got every control message`);
    assert.equal(seqs(survivor, /^recv ctl (\d+)$/).length, CTL_MESSAGES, `${S} got every control message`);
  }
  if (point === 'disconnect') {
    // The server stops sending to disconnect: only the sends it had in flight (4) complete after.
    const at = server.lines.indexOf('disconnecting');
    assert.ok(at >= 0, `the server set out to disconnect: ${tail(server)}`);
    const after = server.lines.slice(at).filter((l) => l.startsWith('sent ctl ')).length;
    assert.ok(after <= 4, `the server stopped sending when it set out to disconnect, but completed ${after} sends after: ${tail(server)}`);
  }
  if (point === 'fp-send') assert.ok(seqs(victim, /^sent fp (\d+)$/).length > 0, `${V} completed some fast-path sends before dying`);
  if (point === 'post') assert.ok(seqs(victim, /^recv fp (\d+)$/).length > 0, `${V} received some fast-path sends before dying`);

  // 5. The fabric: nothing left behind.
  const pids = [server.pid, client.pid];
  assert.deepEqual(ownedBy(dir, [survivor.pid]).filter((n) => n.endsWith('.sock')), [], `${S} left sockets`);
  const clean = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(clean.exit.code, 0, clean.stderr);
  assert.deepEqual(ownedBy(dir, pids), [], 'after softdpu fabric clean, nothing of either process is left');
  assert.deepEqual(readdirSync(dir).filter((n) => !before.includes(n) && !entryOwner(n)), [], 'no stray files in the fabric directory');
  assert.deepEqual(shmOf(pids), [], '/dev/shm holds nothing of either process');
}

describe('kill matrix: either side, process or worker, killed at each point; nothing hangs or leaks, every completed send is received', { concurrency: CONCURRENCY }, () => {
  for (const point of POINTS) {
    for (const victim of ['server', 'client'] as const) {
      for (const kind of ['process', 'thread'] as const) {
        it(`${point}: ${victim} ${kind === 'process' ? 'process' : 'worker thread'} killed`, { timeout: CELL_MS + 30_000 }, (t) => runCell(t, point, victim, kind));
      }
    }
  }
});
