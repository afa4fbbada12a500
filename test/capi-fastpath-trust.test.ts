/**
 * The C library's fast path and memory maps trust nothing a peer writes and lose nothing when a peer
 * dies, under AddressSanitizer and UBSan (the library and the C peers built with them, leaks included):
 * a C pair runs clean; corrupt and forged mmap blobs are refused by the C importer with DOCA's error and
 * a line naming what is wrong, in protocol.md's order; a hostile consumer (its queue's indices, positions 2 short of 2^32, a posted
 * buffer beyond its memory, a memory descriptor of another process or kind) fails the C producer's send
 * with CONNECTION_ABORTED and never makes it write outside; a hostile producer (a filled buffer longer
 * than posted, too much immediate data, no producer id) fails the C consumer with CONNECTION_ABORTED;
 * and a C peer killed with SIGKILL at a fast-path send leaves a survivor that fails its posted receives
 * with DOCA's error, hangs nowhere, and leaves nothing of the dead process after a sweep.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { crc32 } from 'node:zlib';
import { type Child, runCli, spawnChild } from './helpers/child.js';
import { capiFixtures, ccBuild, logged, startProgram, writeSdk } from './helpers/capi.js';
import { tempFabricDir } from './helpers/fabric.js';

const SANITIZE = '-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -g';
const ASAN = { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' };
const IMM = '0102030405060708';
/** Consumer queues (and rings) start 2 short of 2^32: the attacks meet the wrap. */
const NEAR_WRAP = { SOFTDPU_START_POSITION: String(2 ** 32 - 2) };

function assertClean(child: Child, what: string): void {
  assert.doesNotMatch(child.stderr.join(''), /Sanitizer|runtime error/, `${what}: ${child.stderr.join('').slice(-4000)}`);
}

/** `softdpu fabric clean`, then: no entry of `dead` is left. */
async function sweptOf(t: TestContext, dir: string, dead: number[]): Promise<void> {
  const r = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(r.exit.code, 0, r.stderr);
  const left = readdirSync(dir).filter((n) => dead.some((pid) => n.includes(`.${pid}-`)));
  assert.deepEqual(left, [], 'nothing of the killed processes is left after a sweep');
}

/** The blob with the CRC made right again (a forgery, not damage). */
function reseal(b: Buffer): Buffer {
  b.writeUInt32LE(crc32(b.subarray(16)), 12);
  return b;
}

test('the C fast path and memory maps under AddressSanitizer: hostile and killed peers, corrupt blobs', { timeout: 170_000 }, async (t) => {
  const tree = await writeSdk(t, { cflags: SANITIZE });
  const fpPeer = await ccBuild(t, tree, 'host', join(capiFixtures, 'fp-peer', 'peer.c'), 'fp-peer-asan', SANITIZE.split(' '));
  const mmapPeer = await ccBuild(t, tree, 'host', join(capiFixtures, 'mmap-peer.c'), 'mmap-peer-asan', SANITIZE.split(' '));
  const c = (t: TestContext, args: string[], dir: string, env: Record<string, string> = {}) => startProgram(t, fpPeer, args, dir, { ...ASAN, ...env });

  await t.test('a C pair exchanges 64 B and 1 MiB with immediate data, stops and exits clean, leaks included', async (t) => {
    const dir = tempFabricDir(t);
    const server = c(t, ['server', 'bufsize=1048576', 'bufs=2', 'mem=stack'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const client = c(t, ['client', 'bufsize=1048576', 'bufs=2', 'mode=notify'], dir);
    await server.waitFor(/^connected$/, 20_000);
    await client.waitFor(/^connected$/, 20_000);
    server.send('consumer');
    const id = (await server.waitFor(/^consumer-running (\d+)$/, 20_000))[1];
    await client.waitFor(new RegExp(`^peer-consumer ${id}$`), 20_000);
    client.send('producer');
    await client.waitFor(/^producer-running/);
    for (const size of [64, 1 << 20]) {
      client.send(`sendwait ${id} ${size} ${IMM}`);
      await server.waitFor(new RegExp(`^recv ${size} ok \\d+ ${IMM}$`), 20_000);
    }
    client.send('stop-producer');
    server.send('stop-consumer');
    await server.waitFor(/^consumer-state STOPPING->IDLE$/, 20_000);
    await client.waitFor(/^producer-state RUNNING->IDLE$/);
    server.send('destroy');
    await server.waitFor(/^mmap-destroy DOCA_SUCCESS$/);
    client.send('destroy');
    await client.waitFor(/^producer-destroy DOCA_SUCCESS$/);
    client.send('exit');
    server.send('exit');
    assert.equal((await client.exited).code, 0);
    assert.equal((await server.exited).code, 0);
    assertClean(server, 'server');
    assertClean(client, 'client');
  });

  await t.test('corrupt and forged mmap blobs are refused by doca_mmap_create_from_export, each with its error and a line', async (t) => {
    const dir = tempFabricDir(t);
    const exporter = spawnChild(t, 'mmap-exporter', [], { env: { SOFTDPU_FABRIC: dir } });
    const good = Buffer.from((await exporter.waitFor(/^blob ([0-9a-f]+)$/))[1]!, 'hex');
    const importer = startProgram(t, mmapPeer, ['importer', 'b1:00.0'], dir, ASAN);
    const cases: [string, (b: Buffer) => Buffer, string, RegExp][] = [
      ['too short', (b) => b.subarray(0, 100), 'INVALID_VALUE', /./],
      ['damaged', (b) => (b[100]! ^= 1, b), 'INVALID_VALUE', /checksum/],
      ['another kind', (b) => (b.writeUInt16LE(2, 6), reseal(b)), 'INVALID_VALUE', /./],
      ['another fabric', (b) => (b[16]! ^= 1, reseal(b)), 'INVALID_VALUE', /fabric/],
      ['another DPU', (b) => (b.write('elsewhere\0', 132), reseal(b)), 'INVALID_VALUE', /DPU|dpu/],
      ['a stale slot', (b) => (b.writeInt32LE(b.readInt32LE(88) + 1, 88), reseal(b)), 'NOT_FOUND', /./],
      ['a slot beyond the table', (b) => (b.writeUInt32LE(5000, 84), reseal(b)), 'INVALID_VALUE', /./],
      ['an impossible descriptor', (b) => (b.writeUInt32LE(0, 24), reseal(b)), 'INVALID_VALUE', /no process could have/],
      ['another token', (b) => (b[50]! ^= 1, reseal(b)), 'NOT_FOUND', /does not open/],
      ['a range inside the header', (b) => (b.writeDoubleLE(8, 64), reseal(b)), 'INVALID_VALUE', /outside its \d+-byte segment/],
      ['a range beyond the segment', (b) => (b.writeDoubleLE(1e9, 72), reseal(b)), 'INVALID_VALUE', /outside its \d+-byte segment/],
      ['a fractional offset', (b) => (b.writeDoubleLE(64.5, 64), reseal(b)), 'INVALID_VALUE', /outside/],
    ];
    for (const [what, damage, code, line] of cases) {
      const from = importer.lines.length;
      const before = importer.stderr.join('').length;
      importer.send(`import ${damage(Buffer.from(good)).toString('hex')}`);
      const { match } = await importer.waitForLine(/^(imported|import failed) ?(\S*)/, 15_000, from);
      assert.equal(match[0], `import failed DOCA_ERROR_${code}`, what);
      // The line that says why, in what the importer wrote for this blob (stderr may come after stdout).
      await importer.waitForStderr((text) => line.test(text.slice(before)) && /doca_mmap_create_from_export/.test(text.slice(before)), `${what}: ${line}`);
    }
    importer.send(`import ${good.toString('hex')}`);
    await importer.waitFor(/^imported ok 65536 fromExport=1$/);
    importer.send('drop');
    await importer.waitFor(/^dropped DOCA_SUCCESS$/);
    assertClean(importer, 'importer');
  });

  for (const [attack, line] of [
    ['tail', /says -?\d+ buffers are posted in \d+ slots/],
    ['offset', /posted a \d+-byte buffer at byte \d+ of a \d+-byte segment/],
    ['capacity', /posted a 4294967295-byte buffer/],
    ['pid', /names memory of pid \d+ for a queue of pid \d+/],
  ] as const) {
    await t.test(`a hostile consumer (${attack}) fails the C producer's send with CONNECTION_ABORTED; nothing is written outside`, async (t) => {
      const dir = tempFabricDir(t);
      const server = c(t, ['server', 'name=victim'], dir, NEAR_WRAP);
      await server.waitFor(/^started DOCA_SUCCESS$/);
      const hostile = spawnChild(t, 'capi/fp-hostile', ['victim'], { env: { SOFTDPU_FABRIC: dir, ...NEAR_WRAP } });
      const id = (await hostile.waitFor(/^consumer-running (\d+)$/, 20_000))[1];
      await server.waitFor(new RegExp(`^peer-consumer ${id}$`), 20_000);
      server.send('producer');
      await server.waitFor(/^producer-running/);
      hostile.send(`attack ${attack}`);
      await hostile.waitFor(new RegExp(`^attacked ${attack}$`));
      server.send(`send ${id} 64 -`);
      await server.waitFor(/^submit DOCA_ERROR_CONNECTION_ABORTED$/);
      await logged(server, line);
      assert.equal(hostile.lines.filter((l) => l.startsWith('recv')).length, 0, 'nothing was delivered');
      assertClean(server, 'server');
    });
  }

  await t.test('a hostile consumer naming a segment of another kind as its memory fails the C producer\'s send with INVALID_VALUE', async (t) => {
    const dir = tempFabricDir(t);
    const server = c(t, ['server', 'name=victim'], dir);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const hostile = spawnChild(t, 'capi/fp-hostile', ['victim'], { env: { SOFTDPU_FABRIC: dir } });
    const id = (await hostile.waitFor(/^consumer-running (\d+)$/, 20_000))[1];
    await server.waitFor(new RegExp(`^peer-consumer ${id}$`), 20_000);
    server.send('producer');
    await server.waitFor(/^producer-running/);
    hostile.send('attack kind');
    await hostile.waitFor(/^attacked kind$/);
    server.send(`send ${id} 64 -`);
    await server.waitFor(/^submit DOCA_ERROR_INVALID_VALUE$/);
    assertClean(server, 'server');
  });

  /** A C consumer (the server side, `args`) beside the hostile producer, which then runs `attack` on it. */
  const attackConsumer = async (t: TestContext, args: string[], attack: string) => {
    const dir = tempFabricDir(t);
    const server = c(t, args, dir, NEAR_WRAP);
    await server.waitFor(/^started DOCA_SUCCESS$/);
    const hostile = spawnChild(t, 'capi/fp-hostile', ['victim'], { env: { SOFTDPU_FABRIC: dir, ...NEAR_WRAP } });
    await hostile.waitFor(/^connected$/, 20_000);
    await server.waitFor(/^connected$/, 20_000);
    server.send('consumer');
    const id = (await server.waitFor(/^consumer-running (\d+)$/, 20_000))[1];
    await hostile.waitFor(new RegExp(`^peer-consumer ${id}$`), 20_000);
    // The hostile reads its commands once its own consumer runs: a line sent before is lost.
    await hostile.waitFor(/^consumer-running \d+$/, 20_000);
    hostile.send(`attack ${attack} ${id}`);
    await hostile.waitFor(new RegExp(`^attacked ${attack}$`), 20_000);
    return { server, hostile, id };
  };

  for (const [attack, line] of [
    ['fill-length', /reported more bytes than the posted buffer holds/],
    ['fill-imm', /reported more immediate data than the consumer takes/],
    ['fill-producer', /filled a buffer without its producer id/],
  ] as const) {
    await t.test(`a hostile producer (${attack}) fails the C consumer with CONNECTION_ABORTED, its receives flushed, nothing read`, async (t) => {
      const { server } = await attackConsumer(t, ['server', 'name=victim', 'imm=8'], attack);
      await server.waitFor(/^consumer-state RUNNING->STOPPING$/, 20_000);
      await server.waitFor(/^consumer-state STOPPING->IDLE$/, 20_000);
      await logged(server, line);
      assert.equal(server.lines.filter((l) => l === 'recv-error DOCA_ERROR_CONNECTION_ABORTED').length, 4, 'every posted receive fails');
      assert.equal(server.lines.filter((l) => l.startsWith('recv ')).length, 0, 'nothing was read');
      assertClean(server, 'server');
    });
  }

  for (const attack of ['claim-dead', 'claim-anonymous'] as const) {
    await t.test(`a buffer a gone producer claimed (${attack}) is posted again; the C consumer runs on and receives`, async (t) => {
      const { server, hostile, id } = await attackConsumer(t, ['server', 'name=victim', 'bufs=1', 'bufsize=64'], attack);
      // An anonymous claim is given up after 1000 ms: the consumer's own timer looks again (nothing rings it).
      await logged(server, /the producer that claimed a posted buffer is gone; posting the buffer again/);
      assert.equal(server.lines.filter((l) => l.startsWith('recv')).length, 0, 'nothing completed');
      // The buffer is posted again: a fill of it is seen (a bad one, which fails the consumer).
      hostile.send(`attack fill-length ${id}`);
      await server.waitFor(/^recv-error DOCA_ERROR_CONNECTION_ABORTED$/, 20_000);
      assertClean(server, 'server');
    });
  }

  for (const killed of ['producer', 'consumer'] as const) {
    await t.test(`a C ${killed} killed with SIGKILL at a send: the C survivor fails what it holds with DOCA's error, nothing hangs, nothing of the dead is left`, async (t) => {
      const dir = tempFabricDir(t);
      const server = c(t, ['server', 'bufs=4', 'bufsize=65536', 'mode=notify'], dir);
      await server.waitFor(/^started DOCA_SUCCESS$/);
      const client = c(t, ['client', 'bufs=4', 'bufsize=65536', 'repost=0'], dir);
      await server.waitFor(/^connected$/, 20_000);
      await client.waitFor(/^connected$/, 20_000);
      // The client's consumer (no reposting) and producer; the server's consumer and producer.
      server.send('consumer');
      const serverConsumer = (await server.waitFor(/^consumer-running (\d+)$/, 20_000))[1];
      await client.waitFor(new RegExp(`^peer-consumer ${serverConsumer}$`), 20_000);
      client.send('consumer');
      const clientConsumer = (await client.waitFor(/^consumer-running (\d+)$/, 20_000))[1];
      await server.waitFor(new RegExp(`^peer-consumer ${clientConsumer}$`), 20_000);
      client.send('producer');
      server.send('producer');
      await client.waitFor(/^producer-running/);
      await server.waitFor(/^producer-running/);
      if (killed === 'producer') {
        // The client sends a stream and is killed in the middle of it.
        for (let i = 0; i < 50; i++) client.send(`sendwait ${serverConsumer} 65536 ${IMM}`);
        await server.waitFor(/^recv 65536 ok/, 20_000);
        client.kill('SIGKILL');
      } else {
        // The server fills the client's four buffers, then the client is killed while the server is told AGAIN.
        for (let i = 0; i < 4; i++) server.send(`sendwait ${clientConsumer} 65536 ${IMM}`);
        await client.waitFor(/^recv 65536 ok/, 20_000);
        client.kill('SIGKILL');
        server.send(`send ${clientConsumer} 64 -`);
      }
      await client.exited;
      // The survivor's consumer fails with CONNECTION_RESET, its posted receives with it; its producer too.
      await server.waitFor(/^consumer-state STOPPING->IDLE$/, 20_000);
      await server.waitFor(/^producer-state STOPPING->IDLE$/, 20_000);
      assert.ok(server.lines.filter((l) => l === 'recv-error DOCA_ERROR_CONNECTION_RESET').length >= 1, server.story());
      server.send(`send ${clientConsumer} 64 -`);
      await server.waitFor(/^submit DOCA_ERROR_BAD_STATE$/);
      server.send('destroy');
      await server.waitFor(/^mmap-destroy DOCA_SUCCESS$/);
      await sweptOf(t, dir, [client.pid]);
      assertClean(server, 'server');
    });
  }
});
