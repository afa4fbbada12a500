/**
 * softdpu's C data path samples (capi/samples/comch_data_path_high_speed, built with meson against both
 * trees) on a private fabric, with each other and with their TypeScript counterparts (`softdpu sample
 * comch_data_path_high_speed_server` / `_client`), both ways: each text crosses the fast path (a producer
 * into the other side's consumer), both sides exit 0, nothing is left in the fabric.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { assertExit, type Child, sample } from './helpers/child.js';
import { buildSamples, startProgram, writeSdk } from './helpers/capi.js';
import { tempFabricDir } from './helpers/fabric.js';

const SAMPLE = 'comch_data_path_high_speed';

/** Everything `child` wrote (stdout lines and stderr), for the messages of both languages' samples. */
const output = (child: Child) => `${child.lines.join('\n')}\n${child.stderr.join('')}`;

/** The fabric's entries (what a sweep would consider), without the epitaphs TypeScript threads leave on purpose. */
const entries = (dir: string) => readdirSync(dir).filter((name) => !name.endsWith('.exited'));

test('the C data path samples with each other and with softdpu sample, both ways', { timeout: 170_000 }, async (t) => {
  const tree = await writeSdk(t);
  const dpu = await buildSamples(t, tree, 'dpu', SAMPLE);
  const host = await buildSamples(t, tree, 'host', SAMPLE);

  await t.test('the C samples: both texts arrive through the fast path, both exit 0, nothing is left in the fabric', async (t) => {
    const dir = tempFabricDir(t);
    const server = startProgram(t, dpu.server, ['-t', 'from the C server'], dir);
    await server.waitFor(/Server context is running/);
    const client = startProgram(t, host.client, ['-t', 'from the C client'], dir);
    await assertExit(client, 0, [server]);
    await assertExit(server, 0, [client]);
    assert.match(output(server), /Message received: 'from the C client'/);
    assert.match(output(client), /Message received: 'from the C server'/);
    assert.doesNotMatch(output(server) + output(client), /\[ERR\]/);
    assert.deepEqual(entries(dir), []);
  });

  await t.test(`C server, TypeScript client (softdpu sample ${SAMPLE}_client)`, async (t) => {
    const dir = tempFabricDir(t);
    const server = startProgram(t, dpu.server, ['-t', 'from the C server'], dir);
    await server.waitFor(/Server context is running/);
    const client = sample(t, dir, [`${SAMPLE}_client`, '-t', 'from the TypeScript client']);
    await assertExit(client, 0, [server]);
    await assertExit(server, 0, [client]);
    assert.match(output(server), /Message received: 'from the TypeScript client'/);
    assert.match(output(client), /Message received: 'from the C server'/);
  });

  await t.test(`TypeScript server (softdpu sample ${SAMPLE}_server), C client`, async (t) => {
    const dir = tempFabricDir(t);
    // The C client looks for the server every 100 ms until it is there.
    const server = sample(t, dir, [`${SAMPLE}_server`, '-t', 'from the TypeScript server']);
    const client = startProgram(t, host.client, ['-t', 'from the C client'], dir);
    await assertExit(client, 0, [server]);
    await assertExit(server, 0, [client]);
    assert.match(output(server), /Message received: 'from the C client'/);
    assert.match(output(client), /Message received: 'from the TypeScript server'/);
  });
});
