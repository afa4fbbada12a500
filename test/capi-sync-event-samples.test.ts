/**
 * softdpu's C sync event samples (capi/samples/sync_event_local_pci and sync_event_remote_pci, each built
 * with meson against both trees, as DOCA's are: the DPU build is the comch server and takes -r) on private
 * fabrics: the exporter and the importer with each other, on either side, and each against its
 * TypeScript counterpart (`softdpu sample sync_event_*_pci`), in the synchronous, --atomic, --async and
 * --async --atomic modes. Both sides exit 0 after the importer saw 1 and the exporter 2.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { assertExit, type Child, sample } from './helpers/child.js';
import { mesonBuild, repoRoot, runProgram, type SdkTree, type Side, startProgram, writeSdk } from './helpers/capi.js';
import { tempFabricDir } from './helpers/fabric.js';

type Role = 'local' | 'remote';
type Lang = 'C' | 'TS';
const NAMES: Record<Role, string> = { local: 'sync_event_local_pci', remote: 'sync_event_remote_pci' };
const MODES = [[], ['--atomic'], ['--async'], ['--async', '--atomic']];

const output = (child: Child) => `${child.lines.join('\n')}\n${child.stderr.join('')}`;
const entries = (dir: string) => readdirSync(dir).filter((name) => !name.endsWith('.exited'));
const other = (side: Side): Side => (side === 'dpu' ? 'host' : 'dpu');

async function buildSample(t: TestContext, tree: SdkTree, role: Role, side: Side): Promise<string> {
  const build = await mesonBuild(t, tree, side, join(repoRoot, 'capi', 'samples', NAMES[role]), `${NAMES[role]}-${side}`);
  return join(build, `doca_${NAMES[role]}`);
}

/** DOCA's device flags for a side: the Arm device and the representor on the DPU, the host function on the host. */
const devFlags = (side: Side) => (side === 'dpu' ? ['-d', '03:00.0', '-r', 'b1:00.0'] : ['-d', 'b1:00.0']);

test('the C sync event samples with each other and with softdpu sample, in every mode', { timeout: 600_000 }, async (t) => {
  const tree = await writeSdk(t);
  const programs = new Map<string, string>();
  for (const role of ['local', 'remote'] as const) {
    for (const side of ['dpu', 'host'] as const) programs.set(`${role}-${side}`, await buildSample(t, tree, role, side));
  }

  await t.test('-h: DOCA\'s flags, -r on the DPU build only; a missing -d is a usage error', async () => {
    const dpu = await runProgram(t, programs.get('local-dpu')!, ['-h'], tree.scratch);
    const host = await runProgram(t, programs.get('local-host')!, ['-h'], tree.scratch);
    assert.equal(dpu.code, 0, dpu.stderr);
    for (const flag of ['-d, --pci-addr', '-r, --rep-pci', '--async ', '--async-num-tasks', '--atomic']) assert.ok(dpu.stdout.includes(flag), `${flag} in\n${dpu.stdout}`);
    assert.ok(!host.stdout.includes('--rep-pci'), host.stdout);
    const missing = await runProgram(t, programs.get('remote-host')!, [], tree.scratch);
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /-d, --pci-addr/);
  });

  /** One pair on a new fabric: the DPU side (the comch server) first; both exit 0; returns the outputs. */
  async function pair(t: TestContext, local: { lang: Lang; side: Side }, remote: { lang: Lang }, mode: string[]) {
    const dir = tempFabricDir(t);
    const start = (role: Role, lang: Lang, side: Side) => {
      const tasks = mode.includes('--async') && lang === 'C' ? ['--async-num-tasks', '2'] : [];
      const args = [...devFlags(side), ...mode, ...tasks];
      return lang === 'C' ? startProgram(t, programs.get(`${role}-${side}`)!, args, dir) : sample(t, dir, [NAMES[role], ...args]);
    };
    const [first, second]: [Role, Role] = local.side === 'dpu' ? ['local', 'remote'] : ['remote', 'local'];
    const langOf = (role: Role) => (role === 'local' ? local.lang : remote.lang);
    const sideOf = (role: Role) => (role === 'local' ? local.side : other(local.side));
    const a = start(first, langOf(first), sideOf(first));
    const b = start(second, langOf(second), sideOf(second));
    await assertExit(b, 0, [a]);
    await assertExit(a, 0, [b]);
    const byRole = first === 'local' ? { local: a, remote: b } : { local: b, remote: a };
    return { dir, local: output(byRole.local), remote: output(byRole.remote) };
  }

  for (const [i, mode] of MODES.entries()) {
    const name = mode.join(' ') || 'synchronous';
    const atomic = mode.includes('--atomic');
    for (const side of ['host', 'dpu'] as const) {
      await t.test(`${name}: C exporter on the ${side}, C importer on the ${other(side)}`, async (t) => {
        const r = await pair(t, { lang: 'C', side }, { lang: 'C' }, mode);
        assert.match(r.remote, /The remote side signaled: the sync event is 1/);
        assert.match(r.local, /The remote side signaled: the sync event is 2/);
        if (atomic) {
          assert.match(r.local, /added 1 to 0/);
          assert.match(r.remote, /added 1 to 1/);
        } else {
          assert.match(r.local, /Signaled the remote side: set 1/);
          assert.match(r.remote, /Signaled the remote side: set 2/);
        }
        assert.deepEqual(entries(r.dir), []);
      });
    }
    // Each mode alternates the sides, so that every C build (both samples, both sides) meets TypeScript.
    const side: Side = i % 2 === 0 ? 'host' : 'dpu';
    await t.test(`${name}: C exporter on the ${side}, TypeScript importer`, async (t) => {
      const r = await pair(t, { lang: 'C', side }, { lang: 'TS' }, mode);
      assert.match(r.local, /The remote side signaled: the sync event is 2/);
      assert.match(r.remote, /The exporter signaled 1/);
    });
    await t.test(`${name}: TypeScript exporter on the ${side}, C importer`, async (t) => {
      const r = await pair(t, { lang: 'TS', side }, { lang: 'C' }, mode);
      assert.match(r.remote, /The remote side signaled: the sync event is 1/);
      assert.match(r.local, /the event value is 2/);
    });
  }
});
