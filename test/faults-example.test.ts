/**
 * docs/faults.md's worked example, as written: examples/retry-host.mjs against examples/retry-dpu.mjs
 * (restarted whenever it dies, as a supervisor would) under the documented plans.
 */
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Faults } from '../src/fabric/faults/api.js';
import { type Child, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const examples = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');

/** Runs the host side to its end, with the DPU side started again each time it dies; returns the host. */
async function runExample(t: TestContext, dir: string): Promise<{ host: Child; dpus: Child[] }> {
  const env = { SOFTDPU_FABRIC: dir };
  const dpus: Child[] = [];
  let hostDone = false;
  const startDpu = () => {
    const dpu = spawnChild(t, 'retry-dpu', [], { script: join(examples, 'retry-dpu.mjs'), env });
    dpus.push(dpu);
    void dpu.exited.then(() => {
      if (!hostDone && dpus.length < 10) startDpu();
    });
  };
  startDpu();
  const host = spawnChild(t, 'retry-host', [], { script: join(examples, 'retry-host.mjs'), env });
  await host.exited;
  hostDone = true;
  return { host, dpus };
}

test('the retry example recovers from injected AGAIN and from DPU crashes, as docs/faults.md shows', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  Faults.add(
    {
      seed: 7,
      faults: [
        { kind: 'again', match: { ctx: 'doca_comch_client', task: 'send' }, probability: 0.3, count: 1000 },
        { kind: 'crash', match: { ctx: 'doca_comch_server', task: 'send' }, after: 5 },
      ],
    },
    { fabric: dir },
  );
  const { host, dpus } = await runExample(t, dir);
  assert.deepEqual(await host.exited, { code: 0, signal: null }, host.stderr.join(''));
  assert.deepEqual(host.lines, [
    'peer lost after 5 echoes (DOCA_ERROR_NOT_CONNECTED); reconnecting',
    'peer lost after 10 echoes (DOCA_ERROR_NOT_CONNECTED); reconnecting',
    'peer lost after 15 echoes (DOCA_ERROR_NOT_CONNECTED); reconnecting',
    'done: 20 echoes, 12 retried submissions, 3 reconnection(s)',
  ]);
  assert.match(host.stderr.join(''), /\[WARN\]\[faults\] fault f1 \(again\): AGAIN at a send submit of doca_comch_client/);
  const killed = await Promise.all(dpus.slice(0, 3).map((d) => d.exited));
  assert.deepEqual(killed, Array(3).fill({ code: null, signal: 'SIGKILL' }), 'each of the first three DPU processes killed itself');
});

test('a sticky AGAIN (a device that stays full) makes the example give up and say so', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  Faults.add({ kind: 'again', match: { ctx: 'doca_comch_client', task: 'send' }, after: 3 }, { fabric: dir });
  const { host } = await runExample(t, dir);
  assert.deepEqual(await host.exited, { code: 1, signal: null }, host.stderr.join(''));
  assert.deepEqual(host.lines, ['failed at message 3: retry-host: still AGAIN after 8 attempts; giving up (DOCA_ERROR_AGAIN: Resource temporarily unavailable, try again)']);
});
