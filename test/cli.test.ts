/** The softdpu command: help, --version, devices, its one convention for usage errors (exit 2) and failures (exit 1). */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli, runCommand } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

/** dist/ (this file is dist/test/cli.test.js). */
const dist = join(dirname(fileURLToPath(import.meta.url)), '..');

test('softdpu --help prints the commands and exits 0', { timeout: 10_000 }, async (t) => {
  const { exit, stdout } = await runCli(t, ['--help']);
  assert.equal(exit.code, 0);
  for (const word of ['devices', 'fabric clean', 'run --dpu CMD --host CMD', '--fabric', '--topology']) assert.ok(stdout.includes(word), word);
});

test('softdpu bench --help names every benchmark bench/run.ts has', { timeout: 10_000 }, async (t) => {
  const { benches } = await import('../bench/run.js');
  const { exit, stdout } = await runCli(t, ['bench', '--help']);
  assert.equal(exit.code, 0);
  const listed = /those named: ([^)]*)\)/.exec(stdout.replace(/\s+/g, ' '))?.[1] ?? '';
  for (const name of Object.keys(benches)) assert.match(listed, new RegExp(`(^|, )${name}(:|,|$)`), `softdpu bench --help does not name ${name}`);
});

test('softdpu devices lists each device with side, names, representors and capabilities', { timeout: 10_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const { exit, stdout } = await runCli(t, ['devices', '--fabric', dir]);
  assert.equal(exit.code, 0);
  assert.match(stdout, /0000:03:00\.0 {2}DPU Arm \(bf0\)\n {4}ibdev mlx5_0 {2}iface p0/);
  assert.match(stdout, /0000:b1:00\.2 {2}VF {2}pf0vf0 {2}net/);
  assert.match(stdout, /0000:b1:00\.3 {2}host VF/);
  assert.match(stdout, /comch: server yes, client no, max_name_len 128, max_msg_size 4080/);
  assert.match(stdout, /comch: server no, client yes/);
  const json = JSON.parse((await runCli(t, ['devices', '--json', '--fabric', dir])).stdout);
  assert.deepEqual(
    json.devices.map((d: { pci: string; caps: { comch: { server: boolean } } }) => [d.pci, d.caps.comch.server]),
    [['0000:03:00.0', true], ['0000:b1:00.0', false], ['0000:b1:00.2', false], ['0000:b1:00.3', false]],
  );
  assert.equal(json.devices[1].caps.syncEvent.exportToGpu, false);
});

/** Exactly one line on stderr (the convention for every error), and nothing on stdout. */
function assertOneLine(r: { stdout: string; stderr: string }, what: string): string {
  assert.equal(r.stdout, '', `${what}: nothing on stdout`);
  assert.match(r.stderr, /^[^\n]+\n$/, `${what}: one line on stderr, got ${JSON.stringify(r.stderr)}`);
  assert.doesNotMatch(r.stderr, /^softdpu[^:]*: softdpu/, `${what}: no doubled prefix`);
  return r.stderr;
}

test('a usage error is one line on stderr naming what is wrong and where the help is; exit 2; nothing touched', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const f = ['--fabric', dir];
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /^softdpu: unknown command "frobnicate"; see 'softdpu --help'$/],
    [['--jsno'], /^softdpu: unknown option --jsno; see 'softdpu --help'$/],
    [[...f, 'devices'], /^softdpu: --fabric goes after the command/],
    [['--version', 'x'], /^softdpu: unexpected argument "x" after --version/],
    [['devices', '--jsno', ...f], /^softdpu devices: unknown option --jsno; see 'softdpu devices --help'$/],
    [['devices', 'extra', ...f], /^softdpu devices: unexpected argument "extra"; see 'softdpu devices --help'$/],
    [['devices', '--json=1', ...f], /^softdpu devices: --json takes no value \(got "1"\)/],
    [['fabric', ...f], /^softdpu fabric: missing subcommand \(clean, path\); see 'softdpu fabric --help'$/],
    [['fabric', 'wipe', ...f], /^softdpu fabric: unknown subcommand "wipe" \(clean, path\)/],
    [['fabric', 'clean', 'x', ...f], /^softdpu fabric clean: unexpected argument "x"/],
    [['fault', ...f], /^softdpu fault: missing subcommand \(add, list, clear\); see 'softdpu fault --help'$/],
    [['fault', 'wipe', ...f], /^softdpu fault: unknown subcommand "wipe" \(add, list, clear\)/],
    [['fault', 'add', ...f], /^softdpu fault add: missing the fault/],
    [['fault', 'add', '--seed', 'x', '{"kind":"again"}', ...f], /^softdpu fault add: --seed "x" is not an integer/],
    [['fault', 'list', '--seed', '3', ...f], /^softdpu fault list: --seed belongs to fault add/],
    [['fault', 'list', 'extra', ...f], /^softdpu fault list: unexpected argument "extra"/],
    [['top', '--interval', '-5', ...f], /^softdpu top: --interval needs a value \(got "-5"\? write --interval=-5\); see 'softdpu top --help'$/],
    [['top', '--interval=-5', ...f], /^softdpu top: --interval "-5" is not a number of milliseconds \(50 or more\)/],
    [['top', '--interval', ...f], /^softdpu top: --interval needs a value \(got "--fabric"\? write --interval=--fabric\)/],
    [['view', '--port', 'x', ...f], /^softdpu view: --port "x" is not a port number/],
    [['doctor', '--bogus', ...f], /^softdpu doctor: unknown option --bogus; see 'softdpu doctor --help'$/],
    [['demo', 'extra'], /^softdpu demo: unexpected argument "extra"/],
    [['sample'], /^softdpu sample: missing the sample's name; see 'softdpu sample --list'$/],
    [['sample', 'nope'], /^softdpu sample: unknown sample "nope"; see 'softdpu sample --list'$/],
    [['sample', '--bogus'], /^softdpu sample: expected a sample's name, not the option --bogus/],
    [['bench', '--filter', '(', ...f], /^softdpu bench: (--filter "\(" is not a regular expression|the benchmarks ship with the source repository)/],
    [['help', 'nope'], /^softdpu: no help on "nope"/],
  ];
  for (const [args, line] of cases) {
    const r = await runCli(t, args);
    assert.equal(r.exit.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(assertOneLine(r, args.join(' ')).trimEnd(), line, args.join(' '));
  }
  assert.deepEqual(readdirSync(dir), [], 'a usage error changes nothing on the fabric');
});

test('a runtime failure is one line on stderr, without a doubled prefix; exit 1', { timeout: 30_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const f = ['--fabric', dir];
  const cases: [string[], RegExp][] = [
    [['fault', 'add', '{"kind":"nope"}', ...f], /^softdpu fault: Faults\.add: faults\[0\]\.kind is "nope", not one of .*DOCA_ERROR_INVALID_VALUE/],
    [['fault', 'add', join(dir, 'absent.json'), ...f], /^softdpu fault add: ".*absent\.json" is neither JSON nor a readable file: ENOENT/],
    [['fault', 'clear', 'f9', ...f], /^softdpu fault: Faults\.clear: no fault "f9" .*DOCA_ERROR_NOT_FOUND/],
    [['devices', '--topology', join(dir, 'absent.json'), ...f], /^softdpu devices: .*absent\.json.*DOCA_ERROR_BAD_CONFIG/],
  ];
  for (const [args, line] of cases) {
    const r = await runCli(t, args);
    assert.equal(r.exit.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(assertOneLine(r, args.join(' ')).trimEnd(), line, args.join(' '));
  }
});

test('help asked for goes to stdout (exit 0), a command\'s help shows its part; softdpu alone prints the usage to stderr (exit 2)', { timeout: 20_000 }, async (t) => {
  for (const args of [['top', '--help'], ['top', '--jsno', '-h'], ['help', 'top']]) {
    const r = await runCli(t, args);
    assert.deepEqual([r.exit.code, r.stderr], [0, ''], args.join(' '));
    assert.match(r.stdout, /^usage: softdpu top /, args.join(' '));
    assert.match(r.stdout, /top \[--once\] \[--json\] \[--interval MS\]/);
    assert.match(r.stdout, /--fabric DIR/, 'the options every command takes');
    assert.doesNotMatch(r.stdout, /devices \[--json\]/, 'only top\'s part');
  }
  const bare = await runCli(t, []);
  assert.deepEqual([bare.exit.code, bare.stdout], [2, '']);
  assert.match(bare.stderr, /^usage: softdpu <command> \[options\]/);
  assert.match(bare.stderr, /devices \[--json\][\s\S]*demo/);
});

test('softdpu --version and -v print the version in package.json, read where the package is, and the DOCA API it models', { timeout: 20_000 }, async (t) => {
  const { version } = JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-v']) {
    const r = await runCli(t, [flag]);
    assert.deepEqual([r.exit.code, r.stdout, r.stderr], [0, `softdpu ${version} (DOCA 3.0 API)`, ''], flag);
  }
  // As installed: the same dist/src under another package.json, whose version it reads.
  const installed = tempFabricDir(t, 'sdpu-cli-version-');
  cpSync(join(dist, 'src'), join(installed, 'dist', 'src'), { recursive: true });
  writeFileSync(join(installed, 'package.json'), JSON.stringify({ name: 'softdpu', version: '9.8.7', type: 'module' }));
  const elsewhere = await runCommand(t, process.execPath, [join(installed, 'dist', 'src', 'cli', 'main.js'), '--version'], installed, process.env, 15_000);
  assert.deepEqual([elsewhere.code, elsewhere.stdout], [0, 'softdpu 9.8.7 (DOCA 3.0 API)\n'], elsewhere.stderr);
});

test('softdpu demo (npm start) runs every sample pair across processes on a private fabric it removes', { timeout: 120_000 }, async (t) => {
  const tmp = tempFabricDir(t);
  const { exit, stdout, stderr } = await runCli(t, ['demo'], { TMPDIR: tmp });
  assert.equal(exit.code, 0, stderr + stdout);
  assert.match(stdout, /All 6 scenarios passed/);
  for (const line of [/dpu {2}\| Message received: 'Message from the client'/, /host \| Message received: 'Message from the server'/, /host \| The exporter signaled 1/, /dpu {2}\| The exporter signaled 1/, /dpu {2}\| Hello from kernel/, /host \| All 100 answers came back in order/]) {
    assert.match(stdout, line);
  }
  // The closing table (what crossed, from the samples' logs) and where to look further.
  assert.match(stdout, /What the demo measured on the way/);
  assert.match(stdout, /^ {2}1\. +comch_ctrl_path_server \/ _client +\d+ ms +2 {2}2 messages$/m);
  assert.match(stdout, /^ {2}\d\. +sync_event_local_pci \/ _remote_pci +\d+ ms +2 {2}2 sync event signals$/m);
  assert.match(stdout, /^ {2}softdpu top +# /m);
  assert.match(stdout, /^ {2}softdpu view +# /m);
  const fabric = stdout.match(/\((\/[^)]*softdpu-demo-[^)]*)\)/)?.[1];
  assert.ok(fabric?.startsWith(tmp), `the demo's fabric ${fabric} is under TMPDIR`);
  assert.deepEqual(readdirSync(tmp), [], 'the demo removed its fabric');
});
