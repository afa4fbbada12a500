/**
 * softdpu as a dependency of someone else's project. A copy of this checkout (without node_modules'
 * contents, dist/, build/ or prebuilds/: a clean clone) is packed with `npm pack`, whose prepack builds
 * dist/ and the prebuilt binaries; the tarball is installed into a fresh project with --ignore-scripts
 * and --offline (nothing runs, nothing is fetched: as npm 11 does for a dependency nobody approved),
 * and used there as a user would: imported from ESM, type-checked against, its command run, and a host
 * and a DPU process of that project exchanging a comch message and a sync event. Last, the source-build
 * fallback: with a prebuild that does not fit, doctor fails and says what to run; after running it,
 * the local build loads.
 *
 * Everything happens under one temporary directory (npm's cache and the fabric included), removed at
 * the end; every command runs in its own process group, killed on its timeout or when the test ends.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DoctorReport } from '../src/cli/doctor.js';
import { epitaphOwner } from '../src/fabric/names.js';
import { type Ran, runCommand, spawnChild } from './helpers/child.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** What a clean clone lacks: installed and built things, and packing leftovers. */
const NOT_IN_A_CLONE = new Set(['node_modules', 'dist', 'build', 'prebuilds', '.git']);
const ELF_MACHINE: Record<string, number> = { x64: 62, arm64: 183 };
const CROSS_COMPILER: Record<string, string> = { x64: 'x86_64-linux-gnu-gcc', arm64: 'aarch64-linux-gnu-gcc' };
const OTHER_ARCH = process.arch === 'x64' ? 'arm64' : 'x64';

/** What the tarball may hold (package.json's `files`, plus what npm always adds). */
const ALLOWED = [
  /^(package\.json|README\.md|src\/native\/softdpu\.c|src\/native\/binding\.gyp|scripts\/build-native\.mjs)$/,
  /^(LICEN[CS]E|NOTICE)(\.\w+)?$/i,
  /^dist\/src\/.+\.(js|d\.ts|js\.map)$/,
  /^prebuilds\/linux-(x64|arm64)\/softdpu\.node$/,
  /^docs\/[\w.-]+\.md$/,
  /^docs\/images\/[\w.-]+\.(png|svg)$/,
  /^examples\/[\w.-]+\.m?js$/,
  /^src\/cli\/view\/static\/[\w.-]+\.(html|js|css)$/,
  // The C library's sources, which `softdpu sdk` compiles (docs/c.md).
  /^capi\/(\w+\/[\w.-]+\.[ch]|libdoca\.map)$/,
  // The one runtime dependency, bundled (`softdpu view` serves its chart library from the package).
  /^node_modules\/uplot\/(package\.json|README\.md|LICENSE|dist\/[\w.-]+)$/,
];


function assertOk(r: Ran, what: string): Ran {
  assert.deepEqual([r.code, r.signal], [0, null], `${what} failed:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}`);
  return r;
}

/** The environment of every npm command: no settings of an npm that may run these tests, no network, a private cache. */
function npmEnv(tmp: string, fabric: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|init_cwd$)/i.test(k)));
  return {
    ...env,
    npm_config_cache: join(tmp, 'npm-cache'),
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    SOFTDPU_FABRIC: fabric,
  };
}

const DPU = `// DPU side: echoes "hello", then exports a sync event over the connection, waits for 1, sets 2.
import { ComchServer, DevinfoRepFilter, ProgressEngine, SyncEvent, openDeviceByPci, openRepresentorByPci } from 'softdpu';

const arm = openDeviceByPci('03:00.0');
const rep = openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0');
const pe = ProgressEngine.create();
const server = ComchServer.create(arm, rep, 'packed');
pe.connectCtx(server);
server.taskSendSetConf(() => {}, () => {}, 16);
server.start();
const stop = new AbortController();
const driving = pe.run({ signal: stop.signal, until: () => false });
const event = SyncEvent.create();
event.addPublisherLocationRemotePci();
event.addSubscriberLocationCpu(arm);
event.start();
for await (const { connection, data } of server.messages()) {
  await connection.send(data); // echo
  const text = new TextDecoder().decode(data);
  if (text === 'bye') break;
  if (text !== 'hello') continue;
  await connection.send(event.exportToRemotePci(arm));
  event.waitEq(1n, -1n, { timeoutMs: 10_000 });
  console.log('dpu: the host set 1');
  event.updateSet(2n);
}
stop.abort();
await driving;
event.stop();
event.destroy();
await server[Symbol.asyncDispose]();
`;

const HOST = `// Host side: says hello, imports the exported sync event, sets 1 and waits for 2, says bye.
import { ComchClient, ProgressEngine, SyncEvent, openDeviceByPci } from 'softdpu';

const dev = openDeviceByPci('b1:00.0');
const pe = ProgressEngine.create();
const client = ComchClient.create(dev, 'packed');
pe.connectCtx(client);
client.taskSendSetConf(() => {}, () => {}, 16);
client.start();
const stop = new AbortController();
const driving = pe.run({ signal: stop.signal, until: () => false });
const connection = await client.connected({ timeoutMs: 10_000 });
const replies = connection.messages();
const text = async () => new TextDecoder().decode((await replies.next()).value);
await connection.send(new TextEncoder().encode('hello'));
console.log('host: echoed ' + (await text()));
const event = SyncEvent.createFromExport(dev, (await replies.next()).value.slice());
event.start();
event.updateSet(1n);
event.waitEq(2n, -1n, { timeoutMs: 10_000 });
console.log('host: the dpu set ' + event.get());
event.stop();
event.destroy();
await connection.send(new TextEncoder().encode('bye'));
console.log('host: echoed ' + (await text()));
await replies.return();
stop.abort();
await driving;
await client[Symbol.asyncDispose]();
`;

const CHECK_TS = `import { ComchClient, DocaError, ProgressEngine, SyncEvent, openDeviceByPci, type ComchConnection } from 'softdpu';
export async function hello(pci: string): Promise<Uint8Array> {
  const pe: ProgressEngine = ProgressEngine.create();
  const client = ComchClient.create(openDeviceByPci(pci), 'typed');
  pe.connectCtx(client);
  const connection: ComchConnection = await client.connected({ timeoutMs: 1000 });
  await connection.send(new TextEncoder().encode('hi'));
  return SyncEvent.create().exportToRemotePci(openDeviceByPci(pci));
}

export const isAgain = (err: unknown): boolean => DocaError.is(err, 'AGAIN');

// @ts-expect-error: a PCI address is a string (an error here proves the declarations are typed, not any)
openDeviceByPci(42);
`;

function tsconfig(resolution: 'node16' | 'bundler'): string {
  const compilerOptions = {
    ...(resolution === 'node16' ? { module: 'node16', moduleResolution: 'node16' } : { module: 'preserve', moduleResolution: 'bundler' }),
    target: 'es2022',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    // The repo's own @types/node: the project installed nothing but softdpu.
    typeRoots: [join(repo, 'node_modules', '@types')],
    types: ['node'],
  };
  return JSON.stringify({ compilerOptions, files: ['check.ts'] }, null, 2);
}

test('the packed tarball installs offline without scripts into a fresh project and works there', { timeout: 180_000 }, async (t) => {
  const tmp = mkdtempSync('/tmp/sdpu-pack-');
  t.after(() => rmSync(tmp, { recursive: true, force: true }));
  const fabric = join(tmp, 'fabric');
  const env = npmEnv(tmp, fabric);

  // A clean clone of the working tree, packed; prepack builds dist/ and prebuilds/ from scratch.
  const clone = join(tmp, 'clone');
  cpSync(repo, clone, { recursive: true, filter: (src) => !NOT_IN_A_CLONE.has(relative(repo, src).split('/')[0]!) && !src.endsWith('.tgz') });
  symlinkSync(join(repo, 'node_modules'), join(clone, 'node_modules')); // what `npm ci` installed (compiler, types)
  const haveCross = !spawnSync(CROSS_COMPILER[OTHER_ARCH]!, ['--version'], { stdio: 'ignore' }).error;

  await t.test('a pack that cannot build every promised prebuild fails, unless told which to make', async (t) => {
    const noCross = { ...env, [`SOFTDPU_CC_${OTHER_ARCH.toUpperCase()}`]: '/nonexistent/cc' };
    const refused = await runCommand(t, process.execPath, ['scripts/prebuild.mjs'], clone, noCross, 60_000);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, new RegExp(`pack without linux-${OTHER_ARCH} .* with SOFTDPU_PREBUILDS=${process.arch}`));
    assert.throws(() => statSync(join(clone, 'prebuilds')), { code: 'ENOENT' }, 'nothing was built');
  });

  // Without the cross compiler the pack is told to make this platform's prebuild only, and says so.
  const out = join(tmp, 'out');
  mkdirSync(out);
  const packEnv = haveCross ? env : { ...env, SOFTDPU_PREBUILDS: process.arch };
  const packed = assertOk(await runCommand(t, 'npm', ['pack', '--pack-destination', out], clone, packEnv, 120_000), 'npm pack');
  const [tarball] = readdirSync(out).filter((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack made a tarball');
  const tgz = join(out, tarball);
  const holds = haveCross ? `linux-x64, linux-arm64` : `linux-${process.arch}; not for linux-${OTHER_ARCH}`;
  assert.ok(packed.stderr.includes(`the tarball holds prebuilds for ${holds}`), `npm pack says which prebuilds it holds:\n${packed.stderr.slice(-2000)}`);

  await t.test('in the checkout that was packed, `npx softdpu` runs the rebuilt command', async (t) => {
    assert.equal(statSync(join(clone, 'dist', 'src', 'cli', 'main.js')).mode & 0o777, 0o755);
    const devices = assertOk(await runCommand(t, 'npx', ['--offline', 'softdpu', 'devices', '--json'], clone, env, 30_000), 'npx softdpu devices (checkout)');
    assert.equal((JSON.parse(devices.stdout) as { devices: unknown[] }).devices.length, 4);
  });

  await t.test('the tarball holds the library, its types and maps, the prebuilds and the source fallback; no tests, CI or benchmarks', () => {
    const listing = spawnSync('tar', ['-tzf', tgz], { encoding: 'utf8' });
    assert.equal(listing.status, 0, listing.stderr);
    const files = listing.stdout.split('\n').filter((f) => f && !f.endsWith('/')).map((f) => f.replace(/^package\//, ''));
    t.diagnostic(`${tarball}: ${files.length} files, ${Math.round(statSync(tgz).size / 1024)} KiB`);
    const stray = files.filter((f) => !ALLOWED.some((re) => re.test(f)));
    assert.deepEqual(stray, [], 'files outside the `files` intent');
    for (const prefix of ['dist/test/', 'dist/bench/', '.ci/', 'test/', 'bench/', 'build/', 'src/native/build/']) {
      assert.deepEqual(files.filter((f) => f.startsWith(prefix)), [], prefix);
    }
    assert.deepEqual(files.filter((f) => f.startsWith('node_modules/') && !f.startsWith('node_modules/uplot/')), [], 'node_modules/ holds uplot only');
    const required = [
      'package.json', 'README.md', 'src/native/binding.gyp', 'src/native/softdpu.c', 'scripts/build-native.mjs', 'docs/install.md', 'examples/echo-host.mjs',
      'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/index.js.map', 'dist/src/cli/main.js', 'dist/src/cli/doctor.js', 'dist/src/native/locate.js',
      'dist/src/cli/view/server.js', 'src/cli/view/static/index.html', 'src/cli/view/static/app.js', 'node_modules/uplot/dist/uPlot.iife.min.js', 'node_modules/uplot/LICENSE',
      'dist/src/dpa/dev/index.js', 'dist/src/dpa/dev/index.d.ts', 'dist/src/dpa/eu-boot.js', 'dist/src/dpa/eu-worker.js', 'dist/src/cli/samples/dpa-apps/pingpong.js',
      `prebuilds/linux-${process.arch}/softdpu.node`,
    ];
    for (const f of required) assert.ok(files.includes(f), `${f} is in the tarball`);
    const other = `prebuilds/linux-${OTHER_ARCH}/softdpu.node`;
    assert.equal(files.includes(other), haveCross, `${other} is there exactly when ${CROSS_COMPILER[OTHER_ARCH]} is`);
    // Every picture the shipped documents show is shipped with them.
    for (const doc of files.filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(join(clone, doc), 'utf8');
      for (const [, link] of text.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(link!)) continue;
        const target = join(dirname(doc), link!);
        assert.ok(files.includes(target), `${doc} shows ${link}, and ${target} is in the tarball`);
      }
    }
  });

  await t.test('the command is executable in the tarball; the manifest says where the project lives', () => {
    const listing = spawnSync('tar', ['-tvzf', tgz, 'package/dist/src/cli/main.js'], { encoding: 'utf8' });
    assert.equal(listing.status, 0, listing.stderr);
    assert.match(listing.stdout, /^-rwxr-xr-x /, 'dist/src/cli/main.js is stored 0755');
    const pkg = JSON.parse(spawnSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }).stdout) as Record<string, unknown>;
    assert.match((pkg.repository as { url: string }).url, /^git\+https:\/\//);
    assert.equal(typeof pkg.homepage, 'string');
    assert.equal(typeof (pkg.bugs as { url: string }).url, 'string');
  });

  // A fresh project that installs the tarball and nothing else, running no script and fetching nothing.
  const app = join(tmp, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  const install = assertOk(await runCommand(t, 'npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--offline', tgz], app, env, 60_000), 'npm install');
  assert.doesNotMatch(install.stderr, /install-scripts|softdpu@.*(prepare|install)/, 'npm has nothing of softdpu\'s to approve');
  const installed = join(app, 'node_modules', 'softdpu');
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { scripts: Record<string, string>; gypfile: boolean };
  // npm 11 lists `prepare` for approval too when a package is installed from a tarball or git.
  assert.deepEqual(['preinstall', 'install', 'postinstall', 'prepare'].filter((s) => s in manifest.scripts), [], 'a user\'s npm has nothing to run or approve');
  assert.equal(manifest.gypfile, false, 'npm must never turn a binding.gyp into an install script');

  await t.test('prebuilds are ELF shared objects for their architecture', () => {
    for (const arch of haveCross ? ['x64', 'arm64'] : [process.arch]) {
      const head = readFileSync(join(installed, 'prebuilds', `linux-${arch}`, 'softdpu.node')).subarray(0, 20);
      assert.deepEqual([head.toString('latin1', 0, 4), head[4], head.readUInt16LE(16), head.readUInt16LE(18)], ['\x7fELF', 2, 3, ELF_MACHINE[arch]], arch);
    }
  });

  await t.test('a lockfile-driven `npm ci` with scripts allowed builds nothing either (no binding.gyp at the root)', async (t) => {
    assertOk(await runCommand(t, 'npm', ['ci', '--no-audit', '--no-fund', '--offline'], app, env, 60_000), 'npm ci');
    for (const dir of ['build', join('src', 'native', 'build')]) assert.throws(() => statSync(join(installed, dir)), { code: 'ENOENT' }, dir);
    assert.ok(statSync(join(installed, 'prebuilds', `linux-${process.arch}`, 'softdpu.node')).isFile());
  });

  await t.test('imports from ESM and type-checks (node16 and bundler resolution) against its declarations', async (t) => {
    const script = "const m = await import('softdpu'); const p = await import('softdpu/package.json', { with: { type: 'json' } }); console.log(typeof m.ComchServer, typeof m.SyncEvent, p.default.version, import.meta.resolve('softdpu/dpa-dev').endsWith('/dist/src/dpa/dev/index.js'));";
    const imported = assertOk(await runCommand(t, process.execPath, ['--input-type=module', '-e', script], app, env, 20_000), 'import softdpu');
    assert.equal(imported.stdout.trim(), `function function ${JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).version} true`, 'softdpu/dpa-dev resolves to the device API');
    writeFileSync(join(app, 'check.ts'), CHECK_TS);
    // The project's compiler, TypeScript 7 (`typescript` itself is the TypeScript 6 API TypeDoc needs).
    const tsc = join(repo, 'node_modules', '@typescript', 'native', 'bin', 'tsc');
    const checks = (['node16', 'bundler'] as const).map(async (resolution) => {
      writeFileSync(join(app, `tsconfig.${resolution}.json`), tsconfig(resolution));
      assertOk(await runCommand(t, process.execPath, [tsc, '-p', `tsconfig.${resolution}.json`], app, env, 60_000), `tsc (${resolution})`);
    });
    await Promise.all(checks);
  });

  await t.test('npx softdpu devices --json and npx softdpu doctor --json run from the project', async (t) => {
    const devices = assertOk(await runCommand(t, 'npx', ['--offline', 'softdpu', 'devices', '--json'], app, env, 30_000), 'npx softdpu devices');
    const list = (JSON.parse(devices.stdout) as { devices: { pci: string }[] }).devices.map((d) => d.pci);
    assert.deepEqual(list, ['0000:03:00.0', '0000:b1:00.0', '0000:b1:00.2', '0000:b1:00.3']);
    const doctor = assertOk(await runCommand(t, 'npx', ['--offline', 'softdpu', 'doctor', '--json'], app, env, 30_000), 'npx softdpu doctor');
    const report = JSON.parse(doctor.stdout) as DoctorReport;
    assert.equal(report.ok, true);
    assert.equal(report.addon.kind, 'prebuild');
    assert.equal(report.addon.path, join(realpathSync(installed), 'prebuilds', `linux-${process.arch}`, 'softdpu.node'));
    assert.equal(report.fabric.path, fabric);
    const version = assertOk(await runCommand(t, 'npx', ['--offline', 'softdpu', '--version'], app, env, 30_000), 'npx softdpu --version');
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string; repository: { url: string } };
    assert.equal(version.stdout.trim(), `softdpu ${pkg.version} (DOCA 3.0 API)`);
    const bench = await runCommand(t, 'npx', ['--offline', 'softdpu', 'bench'], app, env, 30_000);
    assert.equal(bench.code, 2, bench.stderr);
    assert.ok(bench.stderr.includes(`git clone ${pkg.repository.url.replace(/^git\+/, '')}`), `softdpu bench says where to clone from: ${bench.stderr}`);
  });

  await t.test('softdpu view serves its page and the bundled chart library from the installed package', async (t) => {
    const viewer = spawnChild(t, 'view', ['view', '--port', '0'], { script: join(installed, 'dist', 'src', 'cli', 'main.js'), env: { SOFTDPU_FABRIC: fabric } });
    const url = (await viewer.waitFor(/^softdpu view: (http:\/\/127\.0\.0\.1:\d+\/)/, 30_000))[1]!;
    for (const [path, type] of [['', 'text/html'], ['app.js', 'text/javascript'], ['style.css', 'text/css'], ['vendor/uPlot.iife.min.js', 'text/javascript']]) {
      const res = await fetch(url + path);
      assert.equal(res.status, 200, path);
      assert.ok(res.headers.get('content-type')?.startsWith(type!), `${path}: ${res.headers.get('content-type')}`);
      await res.arrayBuffer();
    }
    viewer.kill('SIGTERM');
    assert.deepEqual(await viewer.exited, { code: 0, signal: null }, 'SIGTERM ends it cleanly');
  });

  await t.test('a host process and a DPU process of the project exchange a comch message and a sync event', async (t) => {
    writeFileSync(join(app, 'dpu.mjs'), DPU);
    writeFileSync(join(app, 'host.mjs'), HOST);
    const dpu = spawnChild(t, 'dpu', [], { script: join(app, 'dpu.mjs'), env: { SOFTDPU_FABRIC: fabric } });
    const host = spawnChild(t, 'host', [], { script: join(app, 'host.mjs'), env: { SOFTDPU_FABRIC: fabric } });
    assert.deepEqual(await host.exited, { code: 0, signal: null }, host.stderr.join('') + dpu.stderr.join(''));
    assert.deepEqual(await dpu.exited, { code: 0, signal: null }, dpu.stderr.join(''));
    assert.deepEqual(host.lines, ['host: echoed hello', 'host: the dpu set 2', 'host: echoed bye']);
    assert.deepEqual(dpu.lines, ['dpu: the host set 1']);
  });

  await t.test('with a prebuild that does not fit, doctor fails and names the build; after it, the local build loads', async (t) => {
    // The other architecture's binary where this one's belongs (or, without it, no binary at all).
    const prebuild = join(installed, 'prebuilds', `linux-${process.arch}`, 'softdpu.node');
    if (haveCross) copyFileSync(join(installed, 'prebuilds', `linux-${OTHER_ARCH}`, 'softdpu.node'), prebuild);
    else writeFileSync(prebuild, 'not a binary');
    const passedOver = [{ path: join(realpathSync(installed), 'prebuilds', `linux-${process.arch}`, 'softdpu.node'), kind: 'prebuild', problem: haveCross ? `built for ${OTHER_ARCH}, this is ${process.arch}` : 'not an ELF shared object' }];
    const cli = join(installed, 'dist', 'src', 'cli', 'main.js');
    const before = await runCommand(t, process.execPath, [cli, 'doctor', '--json'], app, env, 30_000);
    assert.equal(before.code, 1, before.stderr);
    const failed = JSON.parse(before.stdout) as DoctorReport;
    assert.equal(failed.addon.ok, false);
    assert.deepEqual(failed.addon.passedOver[0], passedOver[0]);
    assert.equal(failed.addon.buildCommand, `cd ${realpathSync(installed)} && node scripts/build-native.mjs`);
    // The command doctor names, as a user runs it: node-gyp against this Node's headers, nothing downloaded.
    assertOk(await runCommand(t, process.execPath, ['scripts/build-native.mjs'], installed, env, 120_000), 'node scripts/build-native.mjs');
    const after = assertOk(await runCommand(t, process.execPath, [cli, 'doctor', '--json'], app, env, 30_000), 'doctor after the build');
    const report = JSON.parse(after.stdout) as DoctorReport;
    assert.equal(report.ok, true);
    assert.equal(report.addon.kind, 'build');
    assert.equal(report.addon.path, join(realpathSync(installed), 'src', 'native', 'build', 'Release', 'softdpu.node'));
    assert.deepEqual(report.addon.passedOver, passedOver);
  });

  // The processes that exited leave their epitaphs (docs/observe.md), removed by a later sweep.
  assert.deepEqual(readdirSync(fabric).filter((f) => !f.startsWith('.') && !epitaphOwner(f)), [], 'nothing left in the fabric directory but epitaphs');
});
