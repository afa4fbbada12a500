/**
 * A fabric directory where a fabric cannot live: under /proc (where Node 20's recursive mkdir hangs),
 * under a symlink that leads nowhere, on a read-only or full filesystem. Every command says why at once
 * and creates nothing; doctor says the same; a server whose directory stops taking entries names the
 * real cause instead of "taken". The read-only and full cases mount a small tmpfs (root only: skipped,
 * saying so, elsewhere).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { ComchServer } from '../src/comch/server.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { DocaError } from '../src/core/error.js';
import { ProgressEngine } from '../src/core/pe.js';
import { useFabric } from '../src/fabric/fabric.js';
import { runCli } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

/** Every command that joins or creates a fabric, as a user types it. */
const COMMANDS: string[][] = [
  ['devices'],
  ['fabric', 'clean'],
  ['fault', 'add', '{"kind":"again","probability":0.1,"count":1}'],
  ['sample', 'comch_ctrl_path_server', '-p', '03:00.0', '-r', 'b1:00.0'],
];

async function refusedEverywhere(t: TestContext, dir: string, cause: RegExp): Promise<void> {
  for (const args of COMMANDS) {
    const { exit, stderr } = await runCli(t, [...args, '--fabric', dir]);
    assert.equal(exit.code, 1, `softdpu ${args[0]}: ${stderr}`);
    assert.match(stderr, cause, `softdpu ${args[0]} names the cause`);
  }
  const { exit, stdout } = await runCli(t, ['doctor', '--fabric', dir]);
  assert.equal(exit.code, 1, 'doctor fails');
  assert.match(stdout.split('\n').find((l) => /^\s*fabric\s/.test(l)) ?? '', cause, 'doctor names the cause');
}

describe('a fabric directory on no filesystem that can hold one is refused before anything is created', () => {
  it('under /proc: every command and doctor say procfs, at once', { timeout: 60_000 }, async (t) => {
    await refusedEverywhere(t, '/proc/softdpu-test/fabric', /\/proc\/softdpu-test\/fabric is on procfs/);
  });

  it('under a symlink to nothing: every command and doctor say so, and the target is not created', { timeout: 60_000 }, async (t) => {
    const scratch = tempFabricDir(t, 'sdpu-dangle-');
    const link = join(scratch, 'link');
    const nowhere = join(scratch, 'nowhere');
    symlinkSync(nowhere, link);
    await refusedEverywhere(t, join(link, 'fabric'), /link is a symbolic link to something that does not exist/);
    assert.equal(existsSync(nowhere), false, 'nothing was created where the link points');
  });
});

/** A small tmpfs mounted at a fresh directory, unmounted when the test ends; undefined where mount is not allowed. */
function tmpfs(t: TestContext, options: string): string | undefined {
  const dir = mkdtempSync('/tmp/sdpu-mnt-');
  t.after(() => {
    spawnSync('umount', ['-l', dir]); // lazily: this process still maps segments of the fabric on it
    rmSync(dir, { recursive: true, force: true });
  });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? dir : undefined;
}

const canMount = process.getuid?.() === 0;

/**
 * A fabric joined on a fresh tmpfs (mounted with `options`), and a server on it ready to start; undefined
 * where mount is not allowed.
 */
function serverOnTmpfs(t: TestContext, options: string, name: string): { mnt: string; dir: string; server: ComchServer } | undefined {
  const mnt = tmpfs(t, options);
  if (!mnt) return undefined;
  const dir = join(mnt, 'fabric');
  mkdirSync(dir, { mode: 0o700 });
  useFabric({ dir });
  const arm = openDeviceByPci('03:00.0');
  const server = ComchServer.create(arm, openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0'), name);
  ProgressEngine.create().connectCtx(server);
  server.taskSendSetConf(() => {}, () => {}, 4);
  return { mnt, dir, server };
}

describe('a fabric whose filesystem refuses new entries names the cause', { skip: canMount ? false : 'needs root to mount a tmpfs' }, () => {
  it('read-only: joining says EROFS (NOT_PERMITTED); a server started before the remount says EROFS, not "taken"', { timeout: 30_000 }, async (t) => {
    const on = serverOnTmpfs(t, 'size=1m,mode=0700', 'ro');
    if (!on) return t.skip('mount -t tmpfs is not allowed here');
    const { mnt, dir, server } = on;
    execFileSync('mount', ['-o', 'remount,ro', mnt]);
    assert.throws(() => server.start(), (err: unknown) => DocaError.is(err, 'NOT_PERMITTED') && /EROFS/.test(err.message) && !/taken/.test(err.message), 'the server names the read-only filesystem');
    assert.equal(server.state, 'IDLE', 'the failed start changed nothing');
    server.destroy();
    const { exit, stderr } = await runCli(t, ['devices', '--fabric', dir]);
    assert.equal(exit.code, 1, stderr);
    assert.match(stderr, /cannot create entries in .*EROFS: read-only file system.*DOCA_ERROR_NOT_PERMITTED/);
  });

  it('full: a server that cannot make its socket says ENOSPC (FULL)', { timeout: 30_000 }, async (t) => {
    const on = serverOnTmpfs(t, 'size=1m,nr_inodes=64,mode=0700', 'full');
    if (!on) return t.skip('mount -t tmpfs is not allowed here');
    const { mnt, server } = on;
    // Every inode left goes to filler files; then nothing new fits.
    for (let i = 0; ; i++) {
      try {
        writeFileSync(join(mnt, `filler-${i}`), '');
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
        break;
      }
    }
    assert.throws(() => server.start(), (err: unknown) => DocaError.is(err, 'FULL') && /ENOSPC/.test(err.message), 'the server names the full filesystem');
    assert.equal(server.state, 'IDLE', 'the failed start changed nothing');
    server.destroy();
  });
});
