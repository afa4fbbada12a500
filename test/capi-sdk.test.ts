/**
 * `softdpu sdk --prefix DIR`: the two install trees (host and DPU) a DOCA build finds through
 * pkg-config, with DOCA's library names, sonames and DT_NEEDED entries; its usage errors; and the same
 * command run from an installed package (the files `npm pack` would ship, copied as npm installs them).
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { runCli, runCommand } from './helpers/child.js';
import { assertRan, cleanEnv, repoRoot, type SdkTree, sideEnv, writeSdk } from './helpers/capi.js';
import { tempFabricDir } from './helpers/fabric.js';

const LIBRARIES = ['libdoca_common.so.2', 'libdoca_comch.so.2', 'libdoca_argp.so.2', 'libdoca_dma.so.2'];
const MODULES = ['doca-common', 'doca-comch', 'doca-argp', 'doca-dma'];

/** `readelf -d`'s SONAME, NEEDED and RUNPATH entries of a library. */
async function dynamic(t: Parameters<typeof runCommand>[0], path: string): Promise<{ soname?: string; needed: string[]; runpath?: string }> {
  const r = assertRan(await runCommand(t, 'readelf', ['-d', path], dirname(path), cleanEnv(), 30_000), `readelf -d ${path}`);
  const entry = (tag: string) => [...r.stdout.matchAll(new RegExp(`\\(${tag}\\)\\s+.*\\[(.*)\\]`, 'g'))].map((m) => m[1]!);
  return { soname: entry('SONAME')[0], needed: entry('NEEDED'), runpath: entry('RUNPATH')[0] };
}

/** What each side's tree holds, checked in full. */
async function checkTree(t: Parameters<typeof runCommand>[0], tree: SdkTree, side: 'host' | 'dpu'): Promise<void> {
  const root = join(tree.prefix, side);
  assert.equal(readFileSync(join(root, 'VERSION'), 'utf8'), '3.0.0058\n');
  const headers = readdirSync(join(repoRoot, 'capi', 'include')).sort();
  assert.deepEqual(readdirSync(join(root, 'include')).sort(), [...headers, 'doca_build_config.h'].sort());
  const lib = join(root, 'lib', tree.triplet);
  for (const name of LIBRARIES) {
    assert.ok(existsSync(join(lib, name)) && existsSync(join(lib, name.replace(/\.2$/, ''))), `${side}: ${name} and its .so link`);
    const d = await dynamic(t, join(lib, name));
    assert.equal(d.soname, name);
    if (name !== 'libdoca_common.so.2') {
      assert.ok(d.needed.includes('libdoca_common.so.2'), `${name} needs the real library`);
      assert.equal(d.runpath, '$ORIGIN', `${name} finds it beside itself`);
    }
  }
  const env = sideEnv(tree, side);
  for (const module of MODULES) {
    const version = assertRan(await runCommand(t, 'pkg-config', ['--modversion', module], root, env, 30_000), `pkg-config ${module}`);
    assert.equal(version.stdout.trim(), '3.0.0058');
  }
  const cflags = assertRan(await runCommand(t, 'pkg-config', ['--cflags', 'doca-comch'], root, env, 30_000), 'pkg-config --cflags');
  assert.equal(cflags.stdout.trim(), `-I${join(root, 'include')}`);
  const libs = assertRan(await runCommand(t, 'pkg-config', ['--libs', 'doca-comch', 'doca-argp'], root, env, 30_000), 'pkg-config --libs');
  const words = libs.stdout.trim().split(/\s+/);
  for (const word of [`-L${lib}`, '-ldoca_comch', '-ldoca_argp', '-ldoca_common', `-Wl,-rpath,${lib}`]) assert.ok(words.includes(word), `${side}: --libs has ${word}: ${libs.stdout}`);
  // What meson's has_header_symbol('doca_build_config.h', 'DOCA_ARCH_DPU') sees.
  const macros = assertRan(await runCommand(t, 'sh', ['-c', `echo '#include <doca_build_config.h>' | cc -dM -E -x c ${cflags.stdout.trim()} -`], root, env, 30_000), 'cc -dM');
  assert.equal(/^#define DOCA_ARCH_DPU\b/m.test(macros.stdout), side === 'dpu', `${side}: DOCA_ARCH_DPU`);
  assert.equal(/^#define DOCA_ARCH_HOST\b/m.test(macros.stdout), side === 'host', `${side}: DOCA_ARCH_HOST`);
  assert.match(macros.stdout, /^#define SOFTDPU 1$/m);
}

test('softdpu sdk --prefix writes a host tree and a DPU tree that pkg-config reads, and says which is which', { timeout: 180_000 }, async (t) => {
  const tree = await writeSdk(t);
  assert.match(tree.stdout, new RegExp(`host side: +PKG_CONFIG_PATH=${tree.pkgconfig('host')}\\n`));
  assert.match(tree.stdout, new RegExp(`DPU side: +PKG_CONFIG_PATH=${tree.pkgconfig('dpu')} .*DOCA_ARCH_DPU`));
  assert.match(tree.stdout, /\((\d+) of (\d+) functions implemented, \d+ answer DOCA_ERROR_NOT_SUPPORTED\)/);
  await checkTree(t, tree, 'host');
  await checkTree(t, tree, 'dpu');
  await t.test('a second run over the same prefix replaces the trees', async (t) => {
    assertRan(await runCommand(t, process.execPath, [join(repoRoot, 'dist', 'src', 'cli', 'main.js'), 'sdk', '--prefix', tree.prefix], tree.scratch, cleanEnv(), 120_000), 'softdpu sdk again');
    await checkTree(t, tree, 'host');
  });
});

test('softdpu sdk without --prefix, or with a compiler that is not there, says so in one line', { timeout: 60_000 }, async (t) => {
  const missing = await runCli(t, ['sdk']);
  assert.equal(missing.exit.code, 2);
  assert.equal(missing.stderr, "softdpu sdk: missing --prefix DIR (where to write the install trees); see 'softdpu sdk --help'\n");
  const help = await runCli(t, ['sdk', '--help']);
  assert.equal(help.exit.code, 0);
  assert.match(help.stdout, /sdk --prefix DIR \[--cc CC\] \[--cflags FLAGS\]/);
  const dir = tempFabricDir(t, 'sdpu-c-');
  const noCc = await runCli(t, ['sdk', '--prefix', join(dir, 'sdk'), '--cc', '/nonexistent/cc']);
  assert.equal(noCc.exit.code, 1);
  assert.equal(noCc.stderr, 'softdpu sdk: cannot run the C compiler "/nonexistent/cc" (ENOENT); give another with --cc or $CC\n');
  assert.equal(existsSync(join(dir, 'sdk')), false, 'nothing written');
});

test('softdpu sdk runs from an installed package: the tarball carries the C sources it builds', { timeout: 180_000 }, async (t) => {
  const dir = tempFabricDir(t, 'sdpu-c-');
  // What `npm pack` would put in the tarball (dist/ as built), without packing or running scripts.
  const env = cleanEnv({ npm_config_cache: join(dir, 'npm-cache'), npm_config_offline: 'true', npm_config_update_notifier: 'false' });
  const packed = assertRan(await runCommand(t, 'npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], repoRoot, env, 60_000), 'npm pack --dry-run');
  const files = (JSON.parse(packed.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  for (const f of ['capi/include/doca_comch.h', 'capi/log/log.c', 'capi/argp/start.c', 'capi/libdoca.map', 'dist/src/cli/sdk.js', 'dist/src/cli/sdk-build.js']) {
    assert.ok(files.includes(f), `the package carries ${f}`);
  }
  const installed = join(dir, 'node_modules', 'softdpu');
  for (const f of files) {
    mkdirSync(dirname(join(installed, f)), { recursive: true });
    cpSync(join(repoRoot, f), join(installed, f));
  }
  const tree = await writeSdk(t, { cli: join(installed, 'dist', 'src', 'cli', 'main.js') });
  await checkTree(t, tree, 'dpu');
});
