/**
 * DOCA Sync Event in softdpu's C library against the TypeScript side, both ways, with the library and
 * the C peer (test/fixtures/capi/se-peer) under AddressSanitizer and UBSan, leaks included: DOCA's
 * contract call by call (test/fixtures/capi/se-lifecycle.c); a C exporter and a TypeScript importer and
 * the reverse, each updating and waiting on the other (busy, yielding, and asynchronous wait tasks asleep
 * on their engine's notification handle, woken through the waiter table), with values across 2^32 and
 * the wrap at 2^64; a busy wait that makes no syscall; an importer that notices its exporter's kill -9 or
 * destroy (NOT_CONNECTED), both ways; bad blobs refused with DOCA's errors, naming what is wrong.
 * The scriptable peers of both languages speak the same lines (test/fixtures/se-peer.ts).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { crc32 } from 'node:zlib';
import { type Child, spawnChild } from './helpers/child.js';
import { assertRan, capiFixtures, ccBuild, runProgram, startProgram, writeSdk } from './helpers/capi.js';
import { tempFabricDir } from './helpers/fabric.js';

const SANITIZE = '-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all -g';
const ASAN = { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0', UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' };
const U32 = 2n ** 32n;

type Lang = 'c' | 'ts';

interface Peer {
  lang: Lang;
  child: Child;
  /** Sends a command and resolves with the first line after it that matches `re`. */
  ask(command: string, re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** The first line that matches `re` after the last one matched. */
  next(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

function peerOf(lang: Lang, child: Child): Peer {
  let cursor = 0;
  const after = async (from: number, re: RegExp, timeoutMs = 15_000) => {
    const { match, index } = await child.waitForLine(re, timeoutMs, from).catch((err: Error) => {
      throw new Error(`${lang} peer ${child.pid}: ${err.message}; stdout:\n${child.story()}`);
    });
    cursor = index + 1;
    return match;
  };
  return {
    lang,
    child,
    ask(command, re, timeoutMs) {
      const from = child.lines.length;
      child.send(command);
      return after(from, re, timeoutMs);
    },
    next(re, timeoutMs) {
      return after(cursor, re, timeoutMs);
    },
  };
}

function assertClean(child: Child, what: string): void {
  assert.doesNotMatch(child.stderr.join(''), /Sanitizer|runtime error/, `${what}: ${child.stderr.join('').slice(-4000)}`);
}

test('sync events between C and TypeScript, under AddressSanitizer', { timeout: 170_000 }, async (t) => {
  const tree = await writeSdk(t, { cflags: SANITIZE });
  const [cPeer, lifecycle] = await Promise.all([
    ccBuild(t, tree, 'host', join(capiFixtures, 'se-peer', 'se_peer.c'), 'se-peer', SANITIZE.split(' ')),
    ccBuild(t, tree, 'host', join(capiFixtures, 'se-lifecycle.c'), 'se-lifecycle', SANITIZE.split(' ')),
  ]);

  /** A peer of `lang` on the fabric in `dir`: an exporter (on the Arm device) or an importer of `blob` (on the host). */
  const start = async (t: TestContext, lang: Lang, dir: string, role: 'export' | 'import', options: { blob?: string; ctx?: boolean; dev?: string; shared?: boolean } = {}) => {
    const dev = options.dev ?? (role === 'export' ? '03:00.0' : 'b1:00.0');
    const child =
      lang === 'c'
        ? startProgram(t, cPeer, [role, `dev=${dev}`, ...(options.blob ? [`blob=${options.blob}`] : []), ...(options.ctx ? ['ctx'] : [])], dir, ASAN)
        : spawnChild(t, 'se-peer', [role, dev, ...(options.blob ? [options.blob] : []), ...(options.ctx ? ['ctx'] : []), ...(options.shared ? ['shared'] : [])], { env: { SOFTDPU_FABRIC: dir } });
    const peer = peerOf(lang, child);
    await peer.next(/^(ready|import-error .*)$/);
    return peer;
  };
  const blobOf = async (peer: Peer) => (await peer.child.waitFor(/^blob ([0-9a-f]+)$/))[1]!;
  /** Ends a peer with `exit` and checks a C one ran clean, leaks included. */
  const finish = async (peer: Peer) => {
    peer.child.send('exit');
    const exit = await peer.child.exited;
    assert.deepEqual([exit.code, exit.signal], [0, null], `${peer.lang} peer exited: ${peer.child.stderr.join('').slice(-3000)}`);
    if (peer.lang === 'c') assertClean(peer.child, 'the C peer');
  };

  await t.test('DOCA\'s contract call by call: locations, modes, configuration, masks, pools, stop flushes, wrap at 2^64', async (t) => {
    const dir = tempFabricDir(t);
    const r = assertRan(await runProgram(t, lifecycle, [], dir, { ...ASAN, SOFTDPU_FABRIC: dir }), 'se-lifecycle');
    assert.deepEqual(r.stdout.split('\n').filter((l) => l.startsWith('FAIL')), []);
    assert.match(r.stdout, /^se-lifecycle: 0 failure\(s\)$/m);
    assert.doesNotMatch(r.stderr, /Sanitizer|runtime error/, r.stderr);
    // One line names each refusal.
    assert.match(r.stderr, /doca_sync_event_add_publisher_location_dpa: DPA locations are not supported by softdpu's C library/);
    assert.match(r.stderr, /doca_sync_event_task_wait_eq_alloc_init: mask 0xffffff is not 0, 1, 2, 4 or 8 consecutive 0xff bytes/);
    assert.match(r.stderr, /the counter memory given with doca_sync_event_set_addr is this process's own/);
  });

  for (const [exporterLang, importerLang] of [['c', 'ts'], ['ts', 'c']] as [Lang, Lang][]) {
    for (const ctx of [false, true]) {
      const how = ctx ? 'asynchronous tasks, asleep on their engines' : 'busy and yielding waits';
      await t.test(`a ${exporterLang} exporter and a ${importerLang} importer update and wait on each other: ${how}`, async (t) => {
        const dir = tempFabricDir(t);
        const exporter = await start(t, exporterLang, dir, 'export', { ctx });
        const importer = await start(t, importerLang, dir, 'import', { blob: await blobOf(exporter), ctx });
        const [busy, slow] = ctx ? ['async', 'async'] : ['busy', 'yield'];
        // The importer waits for a value above 2^32, which takes two of the exporter's updates.
        await importer.ask(`wait ${busy} eq ${U32 + 5n} -1`, /^armed$/);
        await exporter.ask(`set ${U32 - 1n}`, /^set ok$/);
        assert.equal((await exporter.ask('add 6', /^add (\d+)$/))[1], String(U32 - 1n));
        await importer.next(/^wait ok$/);
        // The exporter waits on the importer: gt for the blocking waits, neq for the tasks (DOCA has no wait_gt task).
        await exporter.ask(ctx ? `wait async neq ${U32 + 5n} -1` : `wait ${slow} gt ${U32 + 5n} -1`, /^armed$/);
        assert.equal((await importer.ask('add 1', /^add (\d+)$/))[1], String(U32 + 5n));
        await exporter.next(/^wait ok$/);
        assert.equal((await importer.ask('get', /^get (\d+)$/))[1], String(U32 + 6n));
        // A mask: only the low byte is compared (0x1_0000_0002 & 0xff == 2).
        await importer.ask(`wait ${busy} eq 2 0xff`, /^armed$/);
        await exporter.ask(`set ${U32 + 2n}`, /^set ok$/);
        await importer.next(/^wait ok$/);
        // The wrap at 2^64, across the two.
        await importer.ask(`set ${2n ** 64n - 1n}`, /^set ok$/);
        assert.equal((await exporter.ask('add 2', /^add (\d+)$/))[1], String(2n ** 64n - 1n));
        assert.equal((await importer.ask('get', /^get (\d+)$/))[1], '1');
        await finish(importer);
        await finish(exporter);
      });
    }
  }

  await t.test('a C importer reaches a TypeScript counter in the program\'s own shared memory (setAddr: a mem segment the blob names)', async (t) => {
    const dir = tempFabricDir(t);
    const exporter = await start(t, 'ts', dir, 'export', { shared: true });
    const blob = await blobOf(exporter);
    assert.notEqual(blob.slice(48, 128), blob.slice(128, 208), 'the value segment is not the control block');
    const sync = await start(t, 'c', dir, 'import', { blob });
    const tasks = await start(t, 'c', dir, 'import', { blob, ctx: true });
    await tasks.ask(`wait async eq ${U32 + 1n} -1`, /^armed$/);
    await exporter.ask(`set ${U32}`, /^set ok$/);
    assert.equal((await sync.ask('add 1', /^add (\d+)$/))[1], String(U32));
    await tasks.next(/^wait ok$/);
    assert.equal((await exporter.ask('get', /^get (\d+)$/))[1], String(U32 + 1n));
    await finish(sync);
    await finish(tasks);
  });

  await t.test('a busy wait spins on the counter without a syscall, until a TypeScript importer sets it', async (t) => {
    const dir = tempFabricDir(t);
    const exporter = await start(t, 'c', dir, 'export');
    const importer = await start(t, 'ts', dir, 'import', { blob: await blobOf(exporter) });
    await exporter.ask('syscheck 9', /^armed$/); // printed once every other syscall traps
    await importer.ask('set 9', /^set ok$/);
    assert.equal((await exporter.next(/^syscalls (.*)$/))[1], '0 DOCA_SUCCESS');
  });

  for (const exporterLang of ['c', 'ts'] as Lang[]) {
    const importerLang: Lang = exporterLang === 'c' ? 'ts' : 'c';
    await t.test(`a ${importerLang} importer notices the ${exporterLang} exporter's kill -9 (busy and async waits fail NOT_CONNECTED)`, async (t) => {
      const dir = tempFabricDir(t);
      const exporter = await start(t, exporterLang, dir, 'export');
      const blob = await blobOf(exporter);
      const spinning = await start(t, importerLang, dir, 'import', { blob });
      const sleeping = await start(t, importerLang, dir, 'import', { blob, ctx: true });
      await exporter.ask('set 3', /^set ok$/);
      await spinning.ask('wait busy eq 4 -1', /^armed$/);
      await sleeping.ask('wait async eq 4 -1', /^armed$/);
      exporter.child.kill('SIGKILL');
      await spinning.next(/^wait error DOCA_ERROR_NOT_CONNECTED$/, 10_000);
      await sleeping.next(/^wait error DOCA_ERROR_NOT_CONNECTED$/, 10_000);
      // The last value it left is still readable by neither: the handles are no longer valid.
      await spinning.ask('set 4', /^set error DOCA_ERROR_NOT_CONNECTED$/);
      await finish(spinning);
      await finish(sleeping);
    });
  }

  for (const exporterLang of ['c', 'ts'] as Lang[]) {
    const importerLang: Lang = exporterLang === 'c' ? 'ts' : 'c';
    await t.test(`the ${exporterLang} exporter's destroy wakes a sleeping ${importerLang} wait task, which fails NOT_CONNECTED; a new import finds the export revoked`, async (t) => {
      const dir = tempFabricDir(t);
      const exporter = await start(t, exporterLang, dir, 'export');
      const blob = await blobOf(exporter);
      const importer = await start(t, importerLang, dir, 'import', { blob, ctx: true });
      await importer.ask('wait async neq 0 -1', /^armed$/);
      await exporter.ask('set 1', /^set ok$/);
      await importer.next(/^wait ok$/);
      await importer.ask('wait async eq 2 -1', /^armed$/);
      await exporter.ask('destroy', /^destroy DOCA_SUCCESS$/);
      await importer.next(/^wait error DOCA_ERROR_NOT_CONNECTED$/, 10_000);
      await importer.next(/^ctx IDLE$/);
      // A new import of the same blob finds the export revoked.
      const late = await start(t, importerLang, dir, 'import', { blob });
      assert.match(late.child.lines.join('\n'), /^import-error DOCA_ERROR_NOT_FOUND$/m);
      await finish(importer);
      await finish(exporter);
    });
  }

  await t.test('bad blobs are refused with DOCA\'s errors, each named in one line, and change nothing', async (t) => {
    const dir = tempFabricDir(t);
    const exporter = await start(t, 'ts', dir, 'export');
    const good = Buffer.from(await blobOf(exporter), 'hex');
    /** A blob with `edit` applied and its checksum made right again (a forgery, not corruption). */
    const forged = (edit: (b: Buffer) => void) => {
      const b = Buffer.from(good);
      edit(b);
      b.writeUInt32LE(crc32(b.subarray(16)) >>> 0, 12);
      return b;
    };
    const cases: [string, Buffer, string, RegExp][] = [
      ['truncated', good.subarray(0, 100), 'INVALID_VALUE', /the export blob is truncated or padded \(100 bytes, its header says 224\)/],
      ['corrupted', Buffer.concat([good.subarray(0, 50), Buffer.from([good[50]! ^ 1]), good.subarray(51)]), 'INVALID_VALUE', /checksum mismatch/],
      ['of another kind', forged((b) => b.writeUInt16LE(1, 6)), 'INVALID_VALUE', /the blob is a mmap PCI export blob, not a sync event PCI export blob/],
      ['from another fabric', forged((b) => b.writeUInt8(b[16]! ^ 0xff, 16)), 'INVALID_VALUE', /made in another fabric/],
      ['with the counter elsewhere in the control block', forged((b) => b.writeDoubleLE(136, 24 + 80)), 'INVALID_VALUE', /a counter at byte 136 of the event's control block, where the counter is at byte 128/],
      ['naming a segment no process has', forged((b) => b.writeUInt32LE(0, 24)), 'INVALID_VALUE', /names a segment no process could have/],
      ['of a stale slot', forged((b) => b.writeInt32LE(b.readInt32LE(24 + 88 + 4) + 1, 24 + 88 + 4)), 'NOT_FOUND', /the export is stale/],
      ['of another DPU', forged((b) => b.write('other', 24 + 88 + 48)), 'INVALID_VALUE', /was exported on DPU "other/],
    ];
    for (const [what, blob, code, line] of cases) {
      const r = await runProgram(t, cPeer, ['import', `blob=${blob.toString('hex')}`], dir, { ...ASAN, SOFTDPU_FABRIC: dir });
      assert.equal(r.stdout.trim(), `import-error DOCA_ERROR_${code}`, `a blob ${what}: ${r.stderr}`);
      assert.match(r.stderr, line, `a blob ${what}`);
      assert.doesNotMatch(r.stderr, /Sanitizer|runtime error/, r.stderr);
    }
    // The TypeScript side refuses a C blob forged the same way, and takes the genuine one.
    const cExporter = await start(t, 'c', dir, 'export');
    const cGood = Buffer.from(await blobOf(cExporter), 'hex');
    const tsBad = await start(t, 'ts', dir, 'import', { blob: Buffer.concat([cGood.subarray(0, 60), Buffer.from([cGood[60]! ^ 4]), cGood.subarray(61)]).toString('hex') });
    assert.match(tsBad.child.lines.join('\n'), /^import-error DOCA_ERROR_INVALID_VALUE$/m);
    const tsGood = await start(t, 'ts', dir, 'import', { blob: cGood.toString('hex') });
    await cExporter.ask('set 77', /^set ok$/);
    assert.equal((await tsGood.ask('get', /^get (\d+)$/))[1], '77');
    await finish(tsGood);
    await finish(cExporter);
  });
});
