/** softdpu doctor: its report (--json shape), its exit code, and a package whose addon does not load. */
import assert from 'node:assert/strict';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type DoctorReport } from '../src/cli/doctor.js';
import { runCli, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..');

async function doctorJson(t: TestContext, args: string[], script?: string): Promise<{ code: number | null; report: DoctorReport }> {
  const child = spawnChild(t, 'doctor', ['doctor', '--json', ...args], script ? { script } : { script: join(dist, 'src', 'cli', 'main.js') });
  const exit = await child.exited;
  assert.equal(exit.signal, null, child.stderr.join(''));
  return { code: exit.code, report: JSON.parse(child.lines.join('\n')) as DoctorReport };
}

test('softdpu doctor --json reports the loaded addon, the runtime, the probed features and the fabric; exit 0', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { code, report } = await doctorJson(t, ['--fabric', dir]);
  assert.equal(code, 0, JSON.stringify(report, null, 2));
  assert.equal(report.ok, true);
  assert.match(report.version, /^\d+\.\d+\.\d+/);
  assert.equal(report.addon.ok, true);
  assert.ok(report.addon.kind === 'prebuild' || report.addon.kind === 'build', String(report.addon.kind));
  assert.match(report.addon.path ?? '', /\/(prebuilds\/linux-(x64|arm64)|src\/native\/build\/(Release|Debug))\/softdpu\.node$/);
  assert.match(report.addon.buildCommand, /^cd .+ && node scripts\/build-native\.mjs$/);
  assert.deepEqual(report.runtime, {
    node: process.version,
    napi: process.versions.napi,
    platform: process.platform,
    arch: process.arch,
    kernel: report.runtime.kernel,
  });
  assert.match(report.runtime.kernel, /^\d+\.\d+/);
  for (const [name, check] of Object.entries(report.features)) assert.equal(check.ok, true, `${name}: ${check.detail}`);
  assert.deepEqual(Object.keys(report.features).sort(), ['futex', 'memfd', 'pipe', 'procFd']);
  assert.deepEqual({ ...report.fabric, detail: '' }, { ok: true, detail: '', path: dir, exists: true, mode: '0700' });

  const human = await runCli(t, ['doctor', '--fabric', dir]);
  assert.equal(human.exit.code, 0, human.stderr);
  assert.match(human.stdout, /^ {2}addon {4}ok {4}(prebuild|build) \//m);
  assert.match(human.stdout, /^ {2}fabric {3}ok {4}/m);
  assert.match(human.stdout, /Everything softdpu needs works here\./);
});

test('softdpu doctor fails (exit 1) on a fabric directory others can read, and accepts one still to be made', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  chmodSync(dir, 0o755);
  const open = await doctorJson(t, ['--fabric', dir]);
  assert.equal(open.code, 1);
  assert.equal(open.report.ok, false);
  assert.deepEqual([open.report.fabric.ok, open.report.fabric.mode], [false, '0755']);
  assert.match(open.report.fabric.detail, /must be private/);
  assert.equal(open.report.addon.ok, true, 'only the fabric fails');

  const later = join(dir, 'not', 'yet');
  chmodSync(dir, 0o700);
  const absent = await doctorJson(t, ['--fabric', later]);
  assert.equal(absent.code, 0, absent.report.fabric.detail);
  assert.deepEqual([absent.report.fabric.exists, absent.report.fabric.mode], [false, null]);
  assert.match(absent.report.fabric.detail, /absent; it will be created/);
});

test('without a loadable addon, doctor says what was tried and how to build it, and the library fails in one line', { timeout: 60_000 }, async (t) => {
  // A package with the compiled library and no binary at all: no prebuilds/, no build/.
  const root = mkdtempSync('/tmp/sdpu-noaddon-');
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'dist'));
  cpSync(join(dist, 'src'), join(root, 'dist', 'src'), { recursive: true });
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'softdpu', version: '0.0.0-noaddon', type: 'module' }));
  const main = join(root, 'dist', 'src', 'cli', 'main.js');

  const { code, report } = await doctorJson(t, ['--fabric', tempFabricDir(t)], main);
  assert.equal(code, 1);
  assert.equal(report.ok, false);
  assert.equal(report.version, '0.0.0-noaddon');
  assert.deepEqual([report.addon.ok, report.addon.path, report.addon.kind], [false, null, null]);
  assert.deepEqual(
    report.addon.passedOver.map((a) => [a.path, a.kind, a.problem]),
    [
      [join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'softdpu.node'), 'prebuild', 'not found'],
      [join(root, 'src', 'native', 'build', 'Release', 'softdpu.node'), 'build', 'not found'],
      [join(root, 'src', 'native', 'build', 'Debug', 'softdpu.node'), 'build', 'not found'],
    ],
  );
  assert.equal(report.addon.buildCommand, `cd ${root} && node scripts/build-native.mjs`);
  for (const check of Object.values(report.features)) assert.deepEqual(check, { ok: false, detail: 'not probed: the addon did not load' });
  assert.equal(report.fabric.ok, true, 'the fabric check needs no addon');

  // A command that needs the addon: one line naming what was tried and the command to run.
  const sample = spawnChild(t, 'sample', ['sample', '--list'], { script: main });
  assert.equal((await sample.exited).code, 1);
  const lines = sample.stderr.join('').trimEnd().split('\n');
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(lines[0]!, /^softdpu native addon: nothing loads for linux-\w+ in \/tmp\/sdpu-noaddon-\w+ \(prebuilds\/linux-\w+\/softdpu\.node: not found; src\/native\/build\/Release\/softdpu\.node: not found; src\/native\/build\/Debug\/softdpu\.node: not found\); build it from source with `cd \S+ && node scripts\/build-native\.mjs` .*`npx softdpu doctor` explains more$/);

  // And the library itself, imported as a user would.
  await assert.rejects(import(pathToFileURL(join(root, 'dist', 'src', 'index.js')).href), (err: Error) => {
    assert.equal(err.name, 'AddonLoadError');
    assert.equal(err.message, lines[0]);
    return true;
  });
});
