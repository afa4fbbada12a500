/**
 * Issue 20's allocation test: a million busy control-path sends, and a million busy fast-path sends,
 * each a task per message as DOCA's samples send (alloc_init, submit, freed by its completion), allocate
 * at most a few bytes each (ALLOC_LIMIT_BYTES) on the sending side in steady state. The peers are the
 * benchmark's (bench/comch-peer.ts, bench/fastpath-peer.ts: one definition of a send for the test and
 * `softdpu bench alloc`), on a fabric of their own, each side a process; the sender measures itself
 * with bench/lib/alloc.ts (V8's used heap sampled every 128 sends, chunks a GC touched dropped; exact
 * to 0.3 B per message), so the figure does not depend on the machine's load or speed.
 *
 * What made them allocation-free (issue 20): task objects recycled by their pool (core/task.ts), the
 * alloc_init calls' names and object makers made once per context, immediate data copied into storage
 * each task keeps (comch/imm.ts), a claim read through one reused object, DocaError.is without a
 * template string (a retry loop asks it of every AGAIN). Before: 255.8 B per control-path send, 289.6 B
 * per fast-path send.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ALLOC_LIMIT_BYTES, type AllocFigures } from '../bench/lib/alloc.js';
import { type Child, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const bench = join(dirname(fileURLToPath(import.meta.url)), '..', 'bench');
const SENDS = 1_000_000;
/** Generous for 2 loaded CPUs: a million sends take a few seconds on a quiet one. */
const WAIT_MS = 150_000;

/** Starts the receiving side, once it is ready the sending side; resolves with the sender's figures. */
async function measureSender(t: TestContext, peer: string, server: string[], client: string[]): Promise<AllocFigures> {
  const env = { SOFTDPU_FABRIC: tempFabricDir(t, 'sdpu-alloc-'), SOFTDPU_BENCH_ALLOC: '1' };
  const script = join(bench, `${peer}.js`);
  const receiver = spawnChild(t, peer, server, { script, env });
  await receiver.waitFor(/^ready$/, 30_000);
  const sender: Child = spawnChild(t, peer, client, { script, env });
  const line = await sender.waitFor(/^\{"alloc":/, WAIT_MS);
  const figures = (JSON.parse(line.input!) as { alloc: AllocFigures }).alloc;
  t.diagnostic(`${peer} ${client[0]}: ${figures.heap_bytes_per_msg.toFixed(2)} B per send on the V8 heap (external ${figures.external_bytes_per_msg.toFixed(2)} B), ${(figures.gcs_per_msg * 1e6).toFixed(0)} GCs per million sends, over ${figures.clean_messages} of ${figures.messages} steady-state sends`);
  // The measurement itself is sound: most chunks were clean of GC (else the figure rests on few sends).
  assert.ok(figures.clean_messages >= figures.messages / 2, `only ${figures.clean_messages} of ${figures.messages} sends measured between GCs`);
  return figures;
}

test(`a million control-path sends allocate at most ${ALLOC_LIMIT_BYTES} B each on the sending side`, { timeout: WAIT_MS + 60_000 }, async (t) => {
  const f = await measureSender(t, 'comch-peer', ['sink', String(SENDS)], ['send', String(SENDS)]);
  assert.ok(f.heap_bytes_per_msg <= ALLOC_LIMIT_BYTES, `${f.heap_bytes_per_msg.toFixed(2)} B allocated per control-path send (limit ${ALLOC_LIMIT_BYTES} B)`);
});

test(`a million busy fast-path sends allocate at most ${ALLOC_LIMIT_BYTES} B each on the sending side`, { timeout: WAIT_MS + 60_000 }, async (t) => {
  const o = JSON.stringify({ size: 64, count: SENDS, consumers: 1, producers: 1, posted: 1024, taskPerMsg: true });
  const f = await measureSender(t, 'fastpath-peer', ['consume', o], ['produce', o]);
  assert.ok(f.heap_bytes_per_msg <= ALLOC_LIMIT_BYTES, `${f.heap_bytes_per_msg.toFixed(2)} B allocated per fast-path send (limit ${ALLOC_LIMIT_BYTES} B)`);
});
