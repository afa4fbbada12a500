/**
 * Fault plans in one process: validation naming the bad field, determinism from the seed, stickiness
 * and `count`, and the kinds that need no second process (AGAIN at submit, DRIVER at start, damaged
 * blobs, capabilities forced small).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { comchCapGetMaxMsgSize, comchConsumerCapGetMaxImmDataLen } from '../src/comch/caps.js';
import { ComchClient } from '../src/comch/client.js';
import { openDeviceByPci } from '../src/core/dev.js';
import { allocSharedMemory } from '../src/core/memory.js';
import { AccessFlag, Mmap } from '../src/core/mmap.js';
import { ProgressEngine } from '../src/core/pe.js';
import { useFabric } from '../src/fabric/fabric.js';
import { Faults } from '../src/fabric/faults/api.js';
import type { FaultSpec } from '../src/fabric/faults/plan.js';
import { runCli, spawnChild } from './helpers/child.js';
import { EchoCtx, type EchoTask } from './helpers/echo-ctx.js';
import { code } from './helpers/errors.js';
import { tempFabricDir } from './helpers/fabric.js';

/** Every test leaves the process without a plan. */
function cleanPlan(t: TestContext): void {
  Faults.clear();
  t.after(() => Faults.clear());
}

function echo(t: TestContext): { pe: ProgressEngine; ctx: EchoCtx; done: number[] } {
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  const done: number[] = [];
  pe.connectCtx(ctx);
  ctx.taskEchoSetConf((task: EchoTask) => (done.push(task.value), task.free()), (task: EchoTask) => task.free(), 64);
  ctx.start();
  t.after(() => ctx.stopAndWait().then(() => ctx.destroy()));
  return { pe, ctx, done };
}

/** Submits `n` tasks, each until accepted; returns which submissions (by index) got AGAIN. */
function agains(pe: ProgressEngine, ctx: EchoCtx, n: number): number[] {
  const hits: number[] = [];
  let call = 0;
  for (let i = 0; i < n; i++) {
    const task = ctx.taskEchoAllocInit(i);
    for (;;) {
      try {
        task.submit();
        break;
      } catch (err) {
        assert.ok(code('AGAIN')(err), String(err));
        hits.push(call);
      } finally {
        call++;
      }
    }
    while (pe.progress());
  }
  return hits;
}

test('a plan is refused with INVALID_VALUE naming the field that is wrong', (t) => {
  cleanPlan(t);
  const bad: [unknown, RegExp][] = [
    [{ kind: 'explode' }, /faults\[0\]\.kind is "explode", not one of crash, stall/],
    [{ kind: 'again', probability: 1.5 }, /faults\[0\]\.probability is 1\.5, not a number in \[0, 1\]/],
    [{ kind: 'again', after: -1 }, /faults\[0\]\.after is -1, not an integer >= 0/],
    [{ kind: 'again', count: 0 }, /faults\[0\]\.count is 0, not an integer >= 1/],
    [{ kind: 'again', delayMs: 5 }, /faults\[0\]\.delayMs does not apply to kind again/],
    [{ kind: 'again', match: { event: 'consumer_new' } }, /faults\[0\]\.match\.event does not apply to kind again/],
    [{ kind: 'delay-event' }, /faults\[0\]\.delayMs is missing, not an integer >= 1/],
    [{ kind: 'lose-event', match: { event: 'nope' } }, /faults\[0\]\.match\.event is "nope", not one of consumer_new/],
    [{ kind: 'caps', caps: { comch: { maxMsgSiz: 64 } } }, /faults\[0\]\.caps\.comch\.maxMsgSiz is not a numeric capability of comch/],
    [{ kind: 'caps', caps: { comch: { maxMsgSize: 64 } }, probability: 0.5 }, /faults\[0\]\.probability does not apply to kind caps/],
    [{ kind: 'crash', scope: 'galaxy' }, /faults\[0\]\.scope is "galaxy", not "process" or "thread"/],
    [{ kind: 'again', match: { device: 'zz:00.0' } }, /faults\[0\]\.match\.device is "zz:00.0", not a PCI address/],
    [{ seed: -1, faults: [] }, /seed is -1, not an integer in \[0, 2\^32\)/],
    [{ faults: [], extra: 1 }, /extra is not a plan field/],
    [{ faults: [{ kind: 'again', id: 'x' }, { kind: 'driver', id: 'x' }] }, /faults\[1\]\.id "x" is used twice/],
  ];
  for (const [plan, message] of bad) assert.throws(() => Faults.add(plan as FaultSpec), code('INVALID_VALUE', message), JSON.stringify(plan));
  assert.deepEqual(Faults.list().faults, [], 'a refused plan adds nothing');
  const [id] = Faults.add({ kind: 'again', id: 'mine' });
  assert.equal(id, 'mine');
  assert.throws(() => Faults.add({ kind: 'again', id: 'mine' }), code('INVALID_VALUE', /faults\[0\]\.id "mine" is already in the plan/));
  assert.throws(() => Faults.clear({ ids: ['other'] }), code('NOT_FOUND', /no fault "other"/));
});

test('$SOFTDPU_FAULTS (JSON or a file) is checked when a process joins a fabric: a bad plan fails, naming the field', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const bad = await runCli(t, ['devices', '--fabric', dir], { SOFTDPU_FAULTS: '{"faults":[{"kind":"again","match":{"tsak":"send"}}]}' });
  assert.equal(bad.exit.code, 1);
  assert.match(bad.stderr, /\$SOFTDPU_FAULTS: faults\[0\]\.match\.tsak does not apply to kind again \(selectors: pid, side, device, thread, ctx, task\)/);
  const file = join(dir, 'plan.json');
  writeFileSync(file, JSON.stringify({ faults: [{ kind: 'caps', caps: { comch: { maxClients: 1 } } }] }));
  const good = await runCli(t, ['devices', '--json', '--fabric', dir], { SOFTDPU_FAULTS: file });
  assert.equal(good.exit.code, 0, good.stderr);
  assert.equal(JSON.parse(good.stdout).devices[0].caps.comch.maxClients, 1, 'the devices command applies its own plan');
  assert.match(good.stderr, /fault env-1 \(caps\): capabilities of 0000:03:00\.0 forced/);
});

test('the same seed gives the same injections; another seed others', (t) => {
  cleanPlan(t);
  const run = (seed: number) => {
    Faults.clear();
    Faults.add({ seed, faults: [{ kind: 'again', match: { ctx: 'echo ctx', task: 'echo' }, probability: 0.3, count: 1000 }] });
    const { pe, ctx } = echo(t);
    return agains(pe, ctx, 200);
  };
  const first = run(7);
  assert.ok(first.length > 30 && first.length < 120, `about 30% of the calls got AGAIN (${first.length} of ~260)`);
  assert.deepEqual(run(7), first);
  assert.notDeepEqual(run(8), first);
});

test('AGAIN at submit leaves the task unchanged and usable; without count it is sticky', (t) => {
  cleanPlan(t);
  const { pe, ctx, done } = echo(t);
  Faults.add({ kind: 'again', match: { task: 'echo' }, after: 2 });
  const tasks = [1, 2, 3].map((v) => ctx.taskEchoAllocInit(v));
  tasks[0]!.submit();
  tasks[1]!.submit();
  assert.throws(() => tasks[2]!.submit(), code('AGAIN', /fault api-\d+ injected AGAIN on a echo task of echo ctx; the task is unchanged/));
  assert.equal(tasks[2]!.inFlight, false);
  assert.equal(ctx.getNumInflightTasks(), 2, 'the refused task is not in flight');
  assert.throws(() => tasks[2]!.submit(), code('AGAIN'), 'sticky: it keeps failing');
  while (pe.progress());
  assert.deepEqual(done, [1, 2]);
  const [entry] = Faults.list().faults;
  assert.equal(entry!.injections, 2);
  Faults.clear();
  tasks[2]!.submit();
  while (pe.progress());
  assert.deepEqual(done, [1, 2, 3], 'after clear() the same task goes through');
});

test('with count, the fault injects that many times and is spent', (t) => {
  cleanPlan(t);
  const { pe, ctx } = echo(t);
  Faults.add({ kind: 'again', after: 1, count: 3 });
  assert.deepEqual(agains(pe, ctx, 5), [1, 2, 3]);
});

test('DRIVER at start: the context stays IDLE and starts once the plan is cleared', (t) => {
  cleanPlan(t);
  const pe = ProgressEngine.create();
  const ctx = new EchoCtx();
  pe.connectCtx(ctx);
  ctx.taskEchoSetConf(() => {}, () => {}, 4);
  Faults.add({ kind: 'driver', match: { ctx: 'echo ctx' } });
  assert.throws(() => ctx.start(), code('DRIVER', /injected a driver failure \(resources exhausted\) starting echo ctx/));
  assert.equal(ctx.state, 'IDLE');
  assert.throws(() => ctx.start(), code('DRIVER'), 'sticky');
  Faults.clear();
  assert.equal(ctx.start(), 'DOCA_SUCCESS');
  t.after(() => ctx.stopAndWait().then(() => ctx.destroy()));
});

test('corrupted and truncated blobs are refused by the importer with DOCA errors', (t) => {
  cleanPlan(t);
  useFabric({ dir: tempFabricDir(t) });
  const arm = openDeviceByPci('03:00.0');
  const host = openDeviceByPci('b1:00.0');
  const map = Mmap.create();
  map.setMemrange(allocSharedMemory(4096));
  map.setPermissions(AccessFlag.LOCAL_READ_WRITE | AccessFlag.PCI_READ_WRITE);
  map.addDev(arm);
  map.start();
  t.after(() => {
    map.destroy();
    arm.close();
    host.close();
  });
  Faults.add({ kind: 'corrupt-blob', match: { blob: 'mmap_pci' }, count: 1 });
  assert.throws(() => Mmap.createFromExport(map.exportPci(arm), host), code('INVALID_VALUE', /corrupted \(checksum mismatch\)/));
  Faults.clear();
  Faults.add({ kind: 'truncate-blob', match: { blob: 'mmap_pci' }, count: 1 });
  assert.throws(() => Mmap.createFromExport(map.exportPci(arm), host), code('INVALID_VALUE', /truncated/));
  Faults.add({ kind: 'corrupt-blob', match: { blob: 'sync_event_pci' } });
  const imported = Mmap.createFromExport(map.exportPci(arm), host);
  assert.equal(imported.getMemrange().length, 4096, 'count spent, other kind unmatched: the blob is whole');
  imported.destroy();
});

test('capabilities forced small are what the cap queries answer, and they are enforced', async (t) => {
  cleanPlan(t);
  useFabric({ dir: tempFabricDir(t) });
  const host = openDeviceByPci('b1:00.0');
  const info = host.asDevinfo();
  const before = comchCapGetMaxMsgSize(info);
  Faults.add({ kind: 'caps', match: { side: 'host' }, caps: { comch: { maxMsgSize: 64 }, consumer: { maxImmDataLen: 4 } } });
  assert.equal(comchCapGetMaxMsgSize(info), 64);
  assert.equal(comchConsumerCapGetMaxImmDataLen(info), 4);
  const client = ComchClient.create(host, 'caps');
  assert.equal(client.getMaxMsgSize(), 64, 'the default follows the capability');
  assert.throws(() => client.setMaxMsgSize(65), code('INVALID_VALUE', /max_msg_size 65 is not an integer in \[1, 64\]/));
  client.destroy();
  host.close();
  Faults.clear();
  assert.equal(comchCapGetMaxMsgSize(info), before);
});

test('processes adding to one fabric plan at once lose nothing: every fault is there once, with its own id', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const [writers, each] = [4, 15];
  const children = Array.from({ length: writers }, () => spawnChild(t, 'fault-adder', [dir, String(each)]));
  const results = await Promise.all(children.map(async (c) => ({ exit: await c.exited, lines: c.lines, stderr: c.stderr.join('') })));
  for (const r of results) assert.equal(r.exit.code, 0, r.stderr);
  const claimed = results.flatMap((r) => r.lines.find((l) => l.startsWith('added '))!.slice(6).split(' '));
  const listed = Faults.list({ fabric: dir }).faults;
  assert.equal(listed.length, writers * each, 'every add is in the plan');
  assert.equal(new Set(listed.map((f) => f.id)).size, writers * each, 'ids are unique');
  assert.deepEqual([...claimed].sort(), listed.map((f) => f.id).sort(), 'each writer got the ids that are in the plan');
  Faults.clear({ fabric: dir });
});
