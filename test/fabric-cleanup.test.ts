/** What a process killed with -9 leaves behind is removed by the next process or `softdpu fabric clean`. */
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { DocaError } from '../src/core/error.js';
import { entryName, entryOwner } from '../src/fabric/names.js';
import { Segment } from '../src/fabric/segment.js';
import { descriptorFromHex } from './fixtures/lib.js';
import { type Child, runCli, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

function memfdsOf(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`)
    .map((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.includes('memfd:softdpu.'));
}

const entriesOf = (dir: string, pid: number) => readdirSync(dir).filter((name) => entryOwner(name)?.pid === pid);
const shmOf = (pid: number) => readdirSync('/dev/shm').filter((name) => name.includes('softdpu') || name.includes(String(pid)));

async function squatAndKill(t: TestContext, dir: string): Promise<{ victim: Child; descriptors: string[] }> {
  const victim = spawnChild(t, 'squatter', [], { env: { SOFTDPU_FABRIC: dir } });
  await victim.waitFor(/^ready$/);
  const descriptors = victim.lines.filter((l) => l.startsWith('segment ')).map((l) => l.slice(8));
  assert.equal(descriptors.length, 3);
  assert.equal(memfdsOf(victim.pid).length, 3, 'segments are memfds of the squatter');
  assert.equal(entriesOf(dir, victim.pid).length, 2, 'two sockets carry the squatter pid');
  // While it lives, a clean leaves its entries alone and its segments can be opened.
  const report = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(report.exit.code, 0, report.stderr);
  assert.equal(entriesOf(dir, victim.pid).length, 2);
  Segment.open(descriptorFromHex(descriptors[0]!)).close();
  victim.kill('SIGKILL');
  assert.equal((await victim.exited).signal, 'SIGKILL');
  assert.equal(entriesOf(dir, victim.pid).length, 2, 'kill -9 leaves the sockets');
  assert.deepEqual(shmOf(victim.pid), [], 'nothing in /dev/shm: segments were memfds');
  for (const hex of descriptors) {
    assert.throws(() => Segment.open(descriptorFromHex(hex)), (err: unknown) => err instanceof DocaError && err.code === 'DOCA_ERROR_NOT_FOUND');
  }
  return { victim, descriptors };
}

test('after kill -9, `softdpu fabric clean` removes what the process left', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { victim } = await squatAndKill(t, dir);
  const { exit, stdout } = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(exit.code, 0);
  assert.match(stdout, /removed 2,/);
  assert.deepEqual(entriesOf(dir, victim.pid), []);
  assert.deepEqual(shmOf(victim.pid), []);
});

test('a stats announcement a killed process left half-written (stats-tmp) is swept with its other entries', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { victim } = await squatAndKill(t, dir);
  const owner = entryOwner(entriesOf(dir, victim.pid)[0]!)!;
  // What fabric/stats.ts writes before its rename: an entry of the same owner, kind stats-tmp.
  writeFileSync(join(dir, entryName('stats-tmp', String(victim.pid), { owner })), '{"half":');
  const { exit, stdout } = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
  assert.equal(exit.code, 0);
  assert.match(stdout, /removed 3,/);
  assert.deepEqual(entriesOf(dir, victim.pid), []);
});

test('after kill -9, the next process to join the fabric removes what it left', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { victim } = await squatAndKill(t, dir);
  const next = spawnChild(t, 'joiner', [], { env: { SOFTDPU_FABRIC: dir } });
  assert.equal((await next.exited).code, 0);
  assert.deepEqual(entriesOf(dir, victim.pid), []);
});

test('the fabric directory is private: created 0700, a shared one is refused', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const fresh = `${dir}/nested/fabric`;
  const made = await runCli(t, ['fabric', 'path', '--fabric', fresh]);
  assert.equal(made.exit.code, 0, made.stderr);
  const { statSync, chmodSync } = await import('node:fs');
  assert.equal(statSync(fresh).mode & 0o777, 0o700);
  chmodSync(fresh, 0o755);
  const refused = await runCli(t, ['devices', '--fabric', fresh]);
  assert.equal(refused.exit.code, 1);
  assert.match(refused.stderr, /has mode 0755; it must be private \(0700\).*DOCA_ERROR_NOT_PERMITTED/);
});

test('SOFTDPU_FABRIC picks the directory, --fabric overrides it', { timeout: 60_000 }, async (t) => {
  const a = tempFabricDir(t);
  const b = tempFabricDir(t);
  assert.equal((await runCli(t, ['fabric', 'path'], { SOFTDPU_FABRIC: a })).stdout, a);
  assert.equal((await runCli(t, ['fabric', 'path', '--fabric', b], { SOFTDPU_FABRIC: a })).stdout, b);
});
