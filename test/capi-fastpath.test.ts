/**
 * The comch fast path and the Core memory objects of softdpu's C library (stage 4) against the
 * TypeScript side and against itself, with the scriptable fast-path peers (test/fixtures/capi/fp-peer,
 * C, and test/fixtures/fp-peer.ts, its TypeScript twin): every pair both ways (C producer -> TypeScript
 * consumer, TypeScript producer -> C consumer, C <-> C), payloads of 64 B, 64 KiB and 1 MiB and immediate
 * data intact, C consumers over malloc'd, stack and static memory with PCI_READ_WRITE, AGAIN without a
 * posted buffer, a C producer resubmitting on AGAIN with no progress (as NVIDIA's samples do), the consumer events, engines asleep on their notification handles woken across the
 * languages, immediate data limits, a stop's SHUTDOWN flush and DOCA's teardown order (IN_USE), a busy C
 * loop that makes no syscall, consumer queue positions across 2^32, and memory maps exported from C to
 * TypeScript (malloc'd and stack memory) and the reverse. Hostile and killed peers: capi-fastpath-trust.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { type Child, spawnChild } from './helpers/child.js';
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

  await t.test('AGAIN without a posted buffer; the consumer events, new and expired, both ways; a consumer started again', async (t) => {
    const dir = tempFabricDir(t);
    const server = c(t, 'server', ['bufs=1', 'bufsize=64', 'repost=0'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = ts(t, 'client', ['bufs=1', 'bufsize=64', 'repost=0'], dir);
    const id = await pair(server, client, server, client);
    // The C consumer's one buffer is taken by the first send and not posted again.
    client.send(`send ${id} 64 -`);
    await client.waitFor(/^sent 64$/);
    await server.waitFor(/^recv 64 ok \d+ -$/);
    client.send(`send ${id} 64 -`);
    await client.waitFor(/^submit DOCA_ERROR_AGAIN$/);
    server.send('stop-consumer');
    await client.waitFor(new RegExp(`^peer-consumer-expired ${id}$`), 20_000);
    await server.waitFor(/^consumer-state STOPPING->IDLE$/, 20_000);
    client.send(`send ${id} 64 -`);
    await client.waitFor(/^submit DOCA_ERROR_NOT_CONNECTED$/);
    // Started again, the same consumer is announced again (a new queue, a new generation) and receives.
    let from = client.lines.length;
    server.send('start-consumer');
    await server.waitFor(/^consumer-start DOCA_ERROR_IN_PROGRESS$/);
    await client.waitForLine(new RegExp(`^peer-consumer ${id}$`), 20_000, from);
    from = server.lines.length;
    client.send(`sendwait ${id} 64 -`);
    await server.waitForLine(/^recv 64 ok \d+ -$/, 20_000, from);
    // The other way: a TypeScript consumer with one buffer, a C producer told AGAIN once it is taken.
    client.send('consumer');
    const tsId = Number((await client.waitFor(/^consumer-running (\d+)$/, 20_000))[1]);
    await server.waitFor(new RegExp(`^peer-consumer ${tsId}$`), 20_000);
    server.send('producer');
    await server.waitFor(/^producer-running \d+$/);
    server.send(`send ${tsId} 64 -`);
    await server.waitFor(/^sent 64$/);
    await client.waitFor(/^recv 64 ok/);
    server.send(`send ${tsId} 64 -`);
    await server.waitFor(/^submit DOCA_ERROR_AGAIN$/);
    server.send(`send 9999 64 -`);
    await server.waitFor(/^submit DOCA_ERROR_NOT_CONNECTED$/);
    client.send('stop-consumer');
    await server.waitFor(new RegExp(`^peer-consumer-expired ${tsId}$`), 20_000);
    from = server.lines.length;
    server.send(`send ${tsId} 64 -`);
    await server.waitForLine(/^submit DOCA_ERROR_NOT_CONNECTED$/, 15_000, from);
    // Teardown, in DOCA's order.
    server.send('stop-producer');
    await server.waitFor(/^producer-state RUNNING->IDLE$/);
    from = server.lines.length;
    server.send('stop-consumer');
    await server.waitForLine(/^consumer-state STOPPING->IDLE$/, 20_000, from);
    server.send('destroy');
    await server.waitFor(/^consumer-destroy DOCA_SUCCESS$/);
    await server.waitFor(/^mmap-destroy DOCA_SUCCESS$/);
  });

  await t.test("a C producer resubmitting on AGAIN without progressing any engine (NVIDIA's producer_send_msg) gets a buffer posted meanwhile", async (t) => {
    // NVIDIA's data path samples submit their send from the producer's RUNNING callback and, while it
    // answers AGAIN, only nanosleep: the peer's posting must be seen at submission, with no progress here.
    const dir = tempFabricDir(t);
    const server = c(t, 'server', ['bufs=1', 'bufsize=64', 'repost=0'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = c(t, 'client', [], dir);
    const id = await pair(server, client, server, client);
    client.send(`send ${id} 64 -`);
    await client.waitFor(/^sent 64$/);
    await server.waitFor(/^recv 64 ok \d+ -$/);
    client.send(`sendspin ${id} 64 ${IMM}`);
    await client.waitFor(/^spin DOCA_ERROR_AGAIN$/);
    const from = server.lines.length;
    server.send('post');
    const { match } = await server.waitForLine(/^recv (\d+) (\w+) \d+ (\S+)$/, 20_000, from);
    assert.deepEqual([match[1], match[2], match[3]], ['64', 'ok', IMM]);
    await client.waitForLine(/^sent 64$/, 20_000, client.lines.findIndex((l) => l === 'spin DOCA_ERROR_AGAIN'));
    assert.ok(!client.lines.some((l) => /^submit /.test(l)), client.lines.join('\n'));
  });

  await t.test('immediate data limits, a stop flushing posted receives with SHUTDOWN, teardown order (IN_USE)', async (t) => {
    const dir = tempFabricDir(t);
    const server = c(t, 'server', ['bufs=4', 'bufsize=256', 'imm=8'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = ts(t, 'client', ['bufs=4', 'bufsize=256', 'imm=8'], dir);
    const id = await pair(server, client, server, client);
    // The C consumer takes 8 bytes of immediate data: the TypeScript producer is refused 9.
    client.send(`send ${id} 64 ${'ab'.repeat(9)}`);
    await client.waitFor(/^submit DOCA_ERROR_INVALID_VALUE$/);
    client.send(`sendwait ${id} 64 ${'ab'.repeat(8)}`);
    await server.waitFor(new RegExp(`^recv 64 ok \\d+ ${'ab'.repeat(8)}$`));
    // The other way: a TypeScript consumer of 8 bytes, a C producer refused 9 (at submission) and 33 (at alloc_init).
    client.send('consumer');
    const tsId = Number((await client.waitFor(/^consumer-running (\d+)$/, 20_000))[1]);
    await server.waitFor(new RegExp(`^peer-consumer ${tsId}$`), 20_000);
    server.send('producer');
    await server.waitFor(/^producer-running \d+$/);
    server.send(`send ${tsId} 64 ${'cd'.repeat(9)}`);
    await server.waitFor(/^submit DOCA_ERROR_INVALID_VALUE$/);
    let from = server.lines.length;
    server.send(`send ${tsId} 64 ${'cd'.repeat(33)}`);
    await server.waitForLine(/^submit DOCA_ERROR_INVALID_VALUE$/, 15_000, from);
    server.send(`sendwait ${tsId} 64 ${'cd'.repeat(8)}`);
    await client.waitFor(new RegExp(`^recv 64 ok \\d+ ${'cd'.repeat(8)}$`));
    // Teardown while running is refused; a stop flushes the four posted receives with SHUTDOWN.
    server.send('destroy');
    await server.waitFor(/^consumer-destroy DOCA_ERROR_IN_USE$/);
    await server.waitFor(/^producer-destroy DOCA_ERROR_IN_USE$/);
    await server.waitFor(/^mmap-destroy DOCA_ERROR_IN_USE$/);
    server.send('stop-consumer');
    await server.waitFor(/^consumer-state STOPPING->IDLE$/, 20_000);
    assert.equal(server.lines.filter((l) => l === 'recv-error DOCA_ERROR_SHUTDOWN').length, 4, server.story());
    await client.waitFor(new RegExp(`^peer-consumer-expired ${id}$`), 20_000);
    server.send('stop-producer');
    await server.waitFor(/^producer-state RUNNING->IDLE$/);
    from = server.lines.length;
    server.send('destroy');
    await server.waitForLine(/^mmap-destroy DOCA_SUCCESS$/, 15_000, from);
  });

  await t.test('a C engine busy with a running consumer and producer makes no syscall when there is nothing to do', async (t) => {
    const dir = tempFabricDir(t);
    const server = c(t, 'server', [], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = ts(t, 'client', [], dir);
    const id = await pair(server, client, client, server);
    server.send('consumer');
    await server.waitFor(/^consumer-running \d+$/, 20_000);
    server.send(`sendwait ${id} 64 -`);
    await server.waitFor(/^sent 64$/);
    server.send('syscheck 1000000');
    assert.equal((await server.waitFor(/^syscalls (\S+)/, 60_000))[1], '0');
  });

  await t.test('consumer queue positions across 2^32, both ways', async (t) => {
    const dir = tempFabricDir(t);
    const env = { SOFTDPU_START_POSITION: String(2 ** 32 - 3) };
    const server = c(t, 'server', ['bufs=2', 'bufsize=256'], dir, env);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = ts(t, 'client', ['bufs=2', 'bufsize=256'], dir, env);
    const id = await pair(server, client, server, client);
    server.send('producer');
    await server.waitFor(/^producer-running \d+$/);
    client.send('consumer');
    const tsId = Number((await client.waitFor(/^consumer-running (\d+)$/, 20_000))[1]);
    await server.waitFor(new RegExp(`^peer-consumer ${tsId}$`), 20_000);
    for (let i = 0; i < 8; i++) {
      const imm = i.toString(16).padStart(2, '0').repeat(4);
      let from = server.lines.length;
      client.send(`sendwait ${id} ${100 + i} ${imm}`);
      assert.deepEqual((await server.waitForLine(/^recv (\d+) (\w+) \d+ (\S+)$/, 20_000, from)).match.slice(1), [String(100 + i), 'ok', imm]);
      from = client.lines.length;
      server.send(`sendwait ${tsId} ${100 + i} ${imm}`);
      assert.deepEqual((await client.waitForLine(/^recv (\d+) (\w+) \d+ (\S+)$/, 20_000, from)).match.slice(1), [String(100 + i), 'ok', imm]);
    }
  });

  const mmapPeer = await ccBuild(t, tree, 'host', join(capiFixtures, 'mmap-peer.c'), 'mmap-peer');
  for (const mem of ['malloc', 'stack']) {
    await t.test(`a C map over ${mem} memory exported to TypeScript: the same bytes both ways; destroyed, the import is unusable`, async (t) => {
      const dir = tempFabricDir(t);
      const exporter = startProgram(t, mmapPeer, ['export', '03:00.0', mem], dir);
      const blob = (await exporter.waitFor(/^blob ([0-9a-f]+)$/))[1]!;
      assert.equal(blob.length, 196 * 2, 'a 196-byte blob, as protocol.md says');
      const importer = spawnChild(t, 'mmap-importer', ['b1:00.0', blob], { env: { SOFTDPU_FABRIC: dir } });
      await importer.waitFor(/^imported ok 65536 fromExport=true$/);
      exporter.send('check');
      await exporter.waitFor(/^peer-wrote ok$/);
      exporter.send('destroy');
      await exporter.waitFor(/^destroyed DOCA_SUCCESS$/);
      importer.send('check');
      await importer.waitFor(/^invalid DOCA_ERROR_BAD_STATE/);
    });
  }

  await t.test('a TypeScript map imported in C: the same bytes; the exporter gone, the import is unusable', async (t) => {
    const dir = tempFabricDir(t);
    const exporter = spawnChild(t, 'mmap-exporter', [], { env: { SOFTDPU_FABRIC: dir } });
    const blob = (await exporter.waitFor(/^blob ([0-9a-f]+)$/))[1]!;
    const importer = startProgram(t, mmapPeer, ['importer', 'b1:00.0'], dir);
    importer.send(`import ${blob}`);
    await importer.waitFor(/^imported ok 65536 fromExport=1$/);
    importer.send('check');
    await importer.waitFor(/^valid$/);
    exporter.kill();
    await exporter.exited;
    // A liveness answer is reused for 20 ms (protocol.md): ask until it is asked again.
    for (let asked = 0; ; asked++) {
      const from = importer.lines.length;
      importer.send('check');
      const { match } = await importer.waitForLine(/^(valid|invalid \S+)$/, 15_000, from);
      if (match[1] !== 'valid') {
        assert.equal(match[1], 'invalid DOCA_ERROR_BAD_STATE');
        break;
      }
      assert.ok(asked < 10_000, 'the import stays valid after its exporter died');
    }
    importer.send('drop');
    await importer.waitFor(/^dropped DOCA_SUCCESS$/);
  });
});

