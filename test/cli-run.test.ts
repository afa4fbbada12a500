/**
 * `softdpu run`: both sides' commands as real processes on a fabric of the run's own (under the
 * test's TMPDIR, so that its removal shows), their output prefixed, the first failure's status, the
 * timeout and a signal killing whole process groups, and real sample pairs (TypeScript, and C built
 * with meson against `softdpu sdk`) through it.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { DEFAULT_TOPOLOGY_JSON } from '../src/fabric/topology.js';
import { buildSamples, cleanEnv, writeSdk } from './helpers/capi.js';
import { cliPath, type Ran, runCommand, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

/** A word for /bin/sh, quoted. */
const sh = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
/** `softdpu <args>` as a command line for one side. */
const softdpu = (...args: string[]) => [process.execPath, cliPath, ...args].map(sh).join(' ');

/** `softdpu run <args>` with TMPDIR (where its fabric goes) a directory of the test's own. */
async function run(t: TestContext, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Ran & { tmp: string }> {
  const tmp = tempFabricDir(t, 'sdpu-run-');
  const r = await runCommand(t, process.execPath, [cliPath, 'run', ...args], tmp, cleanEnv({ TMPDIR: tmp, ...env }), timeoutMs);
  return { ...r, tmp };
}

const explain = (r: Ran) => `exit ${r.code ?? r.signal}\n--- stdout:\n${r.stdout.slice(-3000)}\n--- stderr:\n${r.stderr.slice(-3000)}`;

/** The process is gone: no such pid, or a zombie waiting for its reaper. */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** The number a line `<prefix> <word> N` carries. */
function pidIn(text: string, re: RegExp): number {
  const m = re.exec(text);
  assert.ok(m, `${re} in ${text}`);
  return Number(m[1]);
}

test('both sides succeed: each line prefixed with its side, stderr kept apart, the last partial line flushed; exit 0; the fabric removed', { timeout: 30_000 }, async (t) => {
  const r = await run(t, [
    '--dpu', 'echo "one $SOFTDPU_SIDE"; echo two >&2; printf "no newline"',
    '--host', 'echo "fabric $SOFTDPU_FABRIC mode $(stat -c %a "$SOFTDPU_FABRIC") side $SOFTDPU_SIDE"',
  ]);
  assert.equal(r.code, 0, explain(r));
  assert.match(r.stdout, /^\[dpu\] one dpu$/m);
  assert.match(r.stdout, /^\[dpu\] no newline$/m);
  assert.match(r.stderr, /^\[dpu\] two$/m);
  assert.doesNotMatch(r.stdout, /two/, 'stderr stays stderr');
  const fabric = /^\[host\] fabric (\S+) mode 700 side host$/m.exec(r.stdout)?.[1];
  assert.ok(fabric?.startsWith(join(r.tmp, 'softdpu-run-')), `a fresh private fabric under TMPDIR: ${r.stdout}`);
  assert.deepEqual(readdirSync(r.tmp), [], 'the fabric directory is removed');
  assert.equal(r.stderr.trim(), '[dpu] two', 'softdpu run says nothing of its own when all succeed');
});

test('several commands a side: [dpu.1], [dpu.2]; the host side waits for --ready from every DPU command', { timeout: 30_000 }, async (t) => {
  // Each DPU command blocks on a fifo only the host side opens: the host must have started after both
  // ready lines, or the run never ends (and the test's bound trips).
  const r = await run(t, [
    '--dpu', 'mkfifo "$SOFTDPU_FABRIC/a"; echo a ready; cat "$SOFTDPU_FABRIC/a"',
    '--dpu', 'mkfifo "$SOFTDPU_FABRIC/b"; echo b ready; cat "$SOFTDPU_FABRIC/b"',
    '--host', 'echo to-a > "$SOFTDPU_FABRIC/a"; echo to-b > "$SOFTDPU_FABRIC/b"; echo sent',
    '--ready', 'ready$',
  ]);
  assert.equal(r.code, 0, explain(r));
  const lines = r.stdout.trimEnd().split('\n');
  for (const line of ['[dpu.1] a ready', '[dpu.2] b ready', '[dpu.1] to-a', '[dpu.2] to-b', '[host] sent']) assert.ok(lines.includes(line), `${line} in ${r.stdout}`);
  assert.ok(lines.indexOf('[host] sent') > Math.max(lines.indexOf('[dpu.1] a ready'), lines.indexOf('[dpu.2] b ready')));
});

test('a DPU command that exits 0 before its --ready line: exit 1, and the host side never starts', { timeout: 30_000 }, async (t) => {
  const r = await run(t, ['--dpu', 'echo starting', '--host', 'echo "host ran"', '--ready', 'Server context is running']);
  assert.equal(r.code, 1, explain(r));
  assert.match(r.stderr, /^softdpu run: \[dpu\] exited before a line matched --ready "Server context is running"; the host side never started$/m);
  assert.doesNotMatch(r.stdout, /host ran/);
  assert.deepEqual(readdirSync(r.tmp), []);
});

test('the first failure\'s status is returned and the other side is stopped; a signal is 128+N', { timeout: 60_000 }, async (t) => {
  // The DPU side fails only once the host side runs (it wrote to the fifo), so that there is one to stop.
  const r = await run(t, [
    '--dpu', 'mkfifo "$SOFTDPU_FABRIC/go"; echo ready; read x < "$SOFTDPU_FABRIC/go"; exit 3',
    '--host', 'echo "pid $$"; echo go > "$SOFTDPU_FABRIC/go"; exec sleep 600',
    '--ready', '^ready$',
    '--grace', '1',
  ]);
  assert.equal(r.code, 3, explain(r));
  assert.match(r.stderr, /^softdpu run: \[dpu\] exited with 3; stopping \[host\]$/m);
  assert.ok(gone(pidIn(r.stdout, /^\[host\] pid (\d+)$/m)), 'the host side was stopped');
  assert.deepEqual(readdirSync(r.tmp), []);

  const killed = await run(t, ['--dpu', 'kill -USR1 $$', '--host', 'exec sleep 600', '--grace', '1']);
  assert.equal(killed.code, 128 + 10, explain(killed));
  assert.match(killed.stderr, /^softdpu run: \[dpu\] was killed by SIGUSR1 \(138\); stopping \[host\]$/m);
});

test('--timeout: what still runs is named in one line and killed, process group and all (SIGKILL after --grace); exit 124', { timeout: 60_000 }, async (t) => {
  // The shell and its grandchild ignore SIGTERM: only the group's SIGKILL ends them.
  const r = await run(t, [
    '--dpu', 'trap "" TERM; sleep 600 & echo "grandchild $!"; wait',
    '--host', 'echo done',
    '--timeout', '4',
    '--grace', '1',
  ]);
  assert.equal(r.code, 124, explain(r));
  const said = r.stderr.split('\n').filter((line) => line.startsWith('softdpu run:'));
  assert.equal(said.length, 1, r.stderr);
  assert.match(said[0]!, /^softdpu run: timed out after 4 s; still running: \[dpu\] "trap .*"; killing them$/);
  assert.doesNotMatch(said[0]!, /\[host\]/, 'the host side had ended');
  assert.ok(gone(pidIn(r.stdout, /^\[dpu\] grandchild (\d+)$/m)), 'the grandchild is gone too');
  assert.deepEqual(readdirSync(r.tmp), []);
});

test('SIGTERM to softdpu run goes to the commands; it cleans up and exits 143', { timeout: 30_000 }, async (t) => {
  const tmp = tempFabricDir(t, 'sdpu-run-');
  const child = spawnChild(t, 'softdpu-run', ['run', '--dpu', 'echo "pid $$"; exec sleep 600', '--host', 'exec sleep 600'], { script: cliPath, env: { TMPDIR: tmp } });
  const pid = Number((await child.waitFor(/^\[dpu\] pid (\d+)$/))[1]);
  child.kill('SIGTERM');
  const exit = await child.exited;
  assert.deepEqual(exit, { code: 143, signal: null }, child.stderr.join(''));
  assert.match(child.stderr.join(''), /^softdpu run: received SIGTERM; passing it on to \[dpu\], \[host\]$/m);
  assert.ok(gone(pid));
  assert.deepEqual(readdirSync(tmp), []);
});

test('--keep-fabric keeps the directory (swept) and says where; --until-host stops the DPU side once the host side succeeded', { timeout: 30_000 }, async (t) => {
  const r = await run(t, ['--keep-fabric', '--dpu', 'echo kept > "$SOFTDPU_FABRIC/note"; echo ready; exec sleep 600', '--ready', 'ready', '--host', 'cat "$SOFTDPU_FABRIC/note"', '--until-host']);
  assert.equal(r.code, 0, explain(r));
  const kept = /^softdpu run: kept the fabric directory (\S+)$/m.exec(r.stderr)?.[1];
  assert.ok(kept?.startsWith(join(r.tmp, 'softdpu-run-')), r.stderr);
  assert.equal(readFileSync(join(kept!, 'note'), 'utf8'), 'kept\n');
  assert.match(r.stdout, /^\[host\] kept$/m);
  assert.match(r.stderr, /^softdpu run: the host side succeeded \(--until-host\); stopping \[dpu\]$/m);
});

test('what a killed process left in the fabric is swept before the directory is kept (or removed)', { timeout: 60_000 }, async (t) => {
  // The host side lists what the DPU's server made once it serves, then kills it with SIGKILL: listed
  // after the kill, the list raced softdpu run stopping the host side for the death (under load, no line).
  const r = await run(t, [
    '--keep-fabric',
    '--dpu', `echo $$ > "$SOFTDPU_FABRIC/server.pid"; exec ${softdpu('sample', 'comch_ctrl_path_server')}`,
    '--ready', 'Server context is running',
    '--host', 'ls "$SOFTDPU_FABRIC" | sed "s/^/left /"; kill -9 "$(cat "$SOFTDPU_FABRIC/server.pid")"; sleep 600',
  ]);
  assert.equal(r.code, 128 + 9, explain(r));
  assert.match(r.stderr, /^softdpu run: \[dpu\] was killed by SIGKILL \(137\)/m);
  const left = [...r.stdout.matchAll(/^\[host\] left (\S+)$/gm)].map((m) => m[1]!).filter((name) => name !== 'server.pid');
  assert.ok(left.length > 0, `the server had entries in the fabric: ${r.stdout}`);
  const kept = /^softdpu run: kept the fabric directory (\S+)$/m.exec(r.stderr)?.[1];
  assert.ok(kept, r.stderr);
  assert.deepEqual(readdirSync(kept), ['server.pid'], `swept: ${left.join(' ')}`);
});

test('usage errors: one line, exit 2, no fabric made; a bad topology names its field', { timeout: 30_000 }, async (t) => {
  const scratch = tempFabricDir(t, 'sdpu-run-topo-');
  const bad = join(scratch, 'bad.json');
  writeFileSync(bad, JSON.stringify({ dpus: [{ arm: [{ pci: 'zz' }] }] }));
  const cases: [string[], RegExp][] = [
    [[], /^softdpu run: nothing to run: give --dpu CMD and\/or --host CMD; see 'softdpu run --help'$/],
    [['--dpu', 'true', '--topology', bad], /^softdpu run: --topology \S+bad\.json: \$\.dpus\[0\]\.arm\[0\]\.pci: "zz" is not a PCI address.*; see 'docs\/topology\.md'$/],
    [['--dpu', 'true', '--fabric', scratch], /^softdpu run: --fabric does not apply/],
    [['--host', 'true', '--ready', 'x'], /^softdpu run: --ready waits for a line of the DPU side, and there is no --dpu/],
    [['--dpu', 'true', '--ready', '('], /^softdpu run: --ready "\(" is not a regular expression/],
    [['--dpu', 'true', '--until-host'], /^softdpu run: --until-host needs a host side/],
    [['--dpu', 'true', '--timeout', 'soon'], /^softdpu run: --timeout "soon" is not a number of seconds/],
    [['--dpu', ''], /^softdpu run: --dpu needs a command, not an empty string/],
    [['true'], /^softdpu run: unexpected argument "true"/],
  ];
  for (const [args, line] of cases) {
    const r = await run(t, args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${explain(r)}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^[^\n]+\n$/, `one line: ${r.stderr}`);
    assert.match(r.stderr.trimEnd(), line, args.join(' '));
    assert.deepEqual(readdirSync(r.tmp), [], `${args.join(' ')}: no fabric made`);
  }
});

test('a TypeScript sample pair through softdpu run, with a --topology file (absolute in $SOFTDPU_TOPOLOGY)', { timeout: 90_000 }, async (t) => {
  const scratch = tempFabricDir(t, 'sdpu-run-topo-');
  writeFileSync(join(scratch, 'topology.json'), JSON.stringify(DEFAULT_TOPOLOGY_JSON));
  const r = await run(t, [
    '--topology', join(scratch, 'topology.json'),
    '--dpu', softdpu('sample', 'comch_ctrl_path_server', '-t', 'from the server'),
    '--host', `echo "topology $SOFTDPU_TOPOLOGY"; exec ${softdpu('sample', 'comch_ctrl_path_client', '-t', 'from the client')}`,
  ]);
  assert.equal(r.code, 0, explain(r));
  const out = r.stdout + r.stderr;
  assert.match(out, /^\[dpu\] .*Message received: 'from the client'$/m);
  assert.match(out, /^\[host\] .*Message received: 'from the server'$/m);
  assert.match(r.stdout, new RegExp(`^\\[host\\] topology ${join(scratch, 'topology.json')}$`, 'm'));
  assert.deepEqual(readdirSync(r.tmp), []);
});

test('a C sample pair (built with meson against softdpu sdk) through softdpu run, the host side after the server\'s --ready line', { timeout: 240_000 }, async (t) => {
  const tree = await writeSdk(t);
  const dpu = await buildSamples(t, tree, 'dpu');
  const host = await buildSamples(t, tree, 'host');
  assert.ok(existsSync(dpu.server) && existsSync(host.client));
  const r = await run(t, [
    '--dpu', `${sh(dpu.server)} -t 'from the C server'`,
    '--host', `${sh(host.client)} -t 'from the C client'`,
    '--ready', 'Server context is running',
  ]);
  assert.equal(r.code, 0, explain(r));
  const out = r.stdout + r.stderr;
  assert.match(out, /^\[dpu\] .*Message received: 'from the C client'/m);
  assert.match(out, /^\[host\] .*Message received: 'from the C server'/m);
  assert.deepEqual(readdirSync(r.tmp), []);
});
