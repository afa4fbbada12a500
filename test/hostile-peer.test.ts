/**
 * A hostile peer process writes generated values into every shared word it can reach while the honest
 * side runs (test/fixtures/hostile-peer.ts). The honest server must only ever see DOCA errors: no crash,
 * no hang, no exception, and its connection to an honest client carries every message, in order.
 * Replay a failure with SOFTDPU_FC_SEED=<seed> (printed in the failing assertion).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnChild } from './helpers/child.js';
import { linesOf, startClient, waitCount } from './helpers/comch.js';
import { tempFabricDir } from './helpers/fabric.js';

const ROUNDS = 1000;
const base = process.env.SOFTDPU_FC_SEED ? Number(process.env.SOFTDPU_FC_SEED) : Date.now() % 1_000_000;
const seeds = process.env.SOFTDPU_FC_SEED ? [base] : [base, base + 1, base + 2];

for (const seed of seeds) {
  test(`a hostile peer writing generated values into shared memory (seed ${seed}, ${ROUNDS} rounds) only ever causes DOCA errors`, { timeout: 90_000 }, async (t) => {
    const dir = tempFabricDir(t);
    const env = { env: { SOFTDPU_FABRIC: dir } };
    const name = `hostile-${seed}`;
    const server = spawnChild(t, 'honest-server', [name], env);
    const honest = startClient(t, dir, { name });
    await honest.waitFor(/^c0 state STARTING->RUNNING$/);
    await server.waitFor(/^attached \d+ consumer \d+$/);
    const hostile = spawnChild(t, 'hostile-peer', [name, String(seed), String(ROUNDS)], env);
    await hostile.waitFor(/^life 1$/, 20_000);
    const bursts = 4;
    for (let b = 0; b < bursts; b++) {
      honest.send(`burst 0 25 h${b}-`);
      await hostile.waitFor(new RegExp(`^round ${Math.min(ROUNDS, (b + 1) * 100)}$`), 60_000).catch(() => {});
    }
    const lives = (await hostile.waitFor(/^done (\d+) lives$/, 60_000))[1];
    const echoes = await waitCount(honest, /^c0 recv \d+ echo:h/, bursts * 25, 30_000).catch((err: Error) => {
      throw new Error(`seed ${seed}: ${err.message}\nhonest server: ${JSON.stringify(server.lines.filter((l) => !l.startsWith('recv')).slice(-20))}\n${server.stderr.join('').slice(-3000)}`);
    });
    const expected = Array.from({ length: bursts }, (_, b) => Array.from({ length: 25 }, (_, i) => `echo:h${b}-${i}`)).flat();
    assert.deepEqual(
      echoes.map((l) => l.split(' ')[3]),
      expected,
      `seed ${seed}: the honest connection carried every message in order`,
    );
    server.send('status');
    await server.waitFor(/^status \d+$/);
    assert.equal(server.proc.exitCode, null, `seed ${seed}: the honest server still runs`);
    const stderr = server.stderr.join('');
    assert.doesNotMatch(stderr, /RangeError|TypeError|Uncaught|SIGSEGV|at .*\.js:\d+/, `seed ${seed}: no exception escaped in the honest server`);
    assert.equal(linesOf(server, /^driver-error/).length, 0);
    for (const line of linesOf(server, /^error /)) assert.match(line, /^error DOCA_ERROR_[A-Z_]+$/, `seed ${seed}: only DOCA errors`);
    const refused = stderr.split('\n').filter((l) => /\[(ERR|WARN)\]/.test(l)).length;
    t.diagnostic(`seed ${seed}: the honest server logged ${refused} refusals and ${linesOf(server, /^error /).length} failed tasks, ${linesOf(server, /^disconnect /).length} disconnects; the hostile peer reached ${linesOf(hostile, /^reached /).length} areas and lived ${lives} times`);
  });
}
