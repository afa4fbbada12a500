/** The topology: the embedded default, files with more DPUs and SFs, and files that are refused. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DocaError } from '../src/core/error.js';
import { PciAddress } from '../src/fabric/pci.js';
import { loadTopology, parseTopology } from '../src/fabric/topology.js';
import { runCli } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

test('the default topology lists exactly the Arm device and the three host functions', () => {
  const topo = loadTopology();
  assert.equal(topo.source, 'default');
  assert.deepEqual(
    topo.devices.map((d) => [d.pci.toString(), d.side, d.funcType ?? null]),
    [
      ['0000:03:00.0', 'dpu', null],
      ['0000:b1:00.0', 'host', 'PF'],
      ['0000:b1:00.2', 'host', 'VF'],
      ['0000:b1:00.3', 'host', 'VF'],
    ],
  );
  const arm = topo.devices[0]!;
  assert.deepEqual(
    arm.representors.map((r) => [r.pci.bdf, r.funcType, r.iface, r.emulated]),
    [
      ['b1:00.0', 'PF', 'pf0hpf', false],
      ['b1:00.2', 'VF', 'pf0vf0', false],
      ['b1:00.3', 'VF', 'pf0vf1', false],
    ],
  );
  assert.ok(topo.devices.slice(1).every((d) => d.representors.length === 0));
});

const twoDpus = {
  caps: { comch: { maxMsgSize: 256 } },
  dpus: [
    { name: 'left', arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.0' }, { pci: 'b1:00.5', type: 'SF', sfnum: 7 }] },
    {
      name: 'right',
      arm: [{ pci: '0000:04:00.0', iface: 'p0' }, { pci: '04:00.1' }],
      host: [{ pci: 'c1:00.0' }, { pci: 'c1:00.1', arm: '04:00.1', emulated: true }],
      caps: { comch: { maxClients: 2 }, syncEvent: { exportToRemoteNet: false } },
    },
  ],
};

test('a file with two DPUs and an SF works, with capability overrides per fabric and per DPU', () => {
  const topo = parseTopology(twoDpus, 'two.json');
  assert.equal(topo.devices.length, 7);
  const sf = topo.devices.find((d) => d.pci.equals('b1:00.5'))!;
  assert.equal(sf.funcType, 'SF');
  assert.equal(sf.dpu, 'left');
  const leftArm = topo.devices.find((d) => d.pci.equals('03:00.0'))!;
  assert.deepEqual(leftArm.representors.map((r) => [r.funcType, r.iface]), [['PF', 'pf0hpf'], ['SF', 'en3f0pf0sf7']]);
  const right1 = topo.devices.find((d) => d.pci.equals('04:00.1'))!;
  assert.deepEqual(right1.representors.map((r) => [r.pci.bdf, r.emulated]), [['c1:00.1', true]]);
  assert.equal(leftArm.caps.comch.maxMsgSize, 256);
  assert.equal(leftArm.caps.comch.maxClients, 512);
  assert.equal(right1.caps.comch.maxMsgSize, 256);
  assert.equal(right1.caps.comch.maxClients, 2);
  assert.equal(right1.caps.syncEvent.exportToRemoteNet, false);
  assert.equal(leftArm.caps.syncEvent.exportToRemoteNet, true);
});

const bad: [string, unknown, RegExp][] = [
  ['no dpus', {}, /\$\.dpus: must be an array/],
  ['empty dpus', { dpus: [] }, /\$\.dpus: must have at least 1 entry/],
  ['bad pci', { dpus: [{ arm: [{ pci: 'zz:00.0' }] }] }, /\$\.dpus\[0\]\.arm\[0\]\.pci: "zz:00\.0" is not a PCI address/],
  ['missing pci', { dpus: [{ arm: [{}] }] }, /\$\.dpus\[0\]\.arm\[0\]\.pci: is required/],
  ['duplicate address', { dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: '0000:03:00.0' }] }] }, /\$\.dpus\[0\]\.host\[0\]: PCI address 0000:03:00\.0 is already used by \$\.dpus\[0\]\.arm\[0\]/],
  ['unknown field', { dpus: [{ arm: [{ pci: '03:00.0' }], hots: [] }] }, /\$\.dpus\[0\]\.hots: unknown field/],
  ['bad type', { dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.0', type: 'XF' }] }] }, /\$\.dpus\[0\]\.host\[0\]\.type: "XF" is not PF, VF or SF/],
  ['cap out of range', { caps: { comch: { maxMsgSize: 0 } }, dpus: [{ arm: [{ pci: '03:00.0' }] }] }, /\$\.caps\.comch\.maxMsgSize: must be an integer in \[1, 1048576\], got 0/],
  ['unknown cap', { caps: { comch: { maxMsg: 1 } }, dpus: [{ arm: [{ pci: '03:00.0' }] }] }, /\$\.caps\.comch\.maxMsg: unknown field/],
  ['a capability softdpu cannot give', { caps: { syncEvent: { exportToGpu: true } }, dpus: [{ arm: [{ pci: '03:00.0' }] }] }, /\$\.caps\.syncEvent\.exportToGpu: cannot be true: softdpu has no GPU/],
  ['more execution units than an idle mask holds', { caps: { dpa: { numEus: 33 } }, dpus: [{ arm: [{ pci: '03:00.0' }] }] }, /\$\.caps\.dpa\.numEus: must be an integer in \[1, 32\], got 33/],
  ['bad arm ref', { dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.0', arm: '05:00.0' }] }] }, /\$\.dpus\[0\]\.host\[0\]\.arm: 0000:05:00\.0 is not an Arm device of bf0/],
  ['a DPU name longer than an export blob holds', { dpus: [{ name: 'ü'.repeat(33), arm: [{ pci: '03:00.0' }] }] }, /\$\.dpus\[0\]\.name: "ü+" is 66 bytes of UTF-8; at most 64/],
  ['an sfnum no 64-bit integer holds', { dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.5', type: 'SF', sfnum: 4.4e80 }] }] }, /\$\.dpus\[0\]\.host\[0\]\.sfnum: is only for SF functions and must be an integer in \[0, 2\^53 - 1\]/],
  ['bool cap', { dpus: [{ arm: [{ pci: '03:00.0' }], caps: { mmap: { exportPci: 'yes' } } }] }, /\$\.dpus\[0\]\.caps\.mmap\.exportPci: must be true or false/],
];

for (const [what, doc, message] of bad) {
  test(`a topology with ${what} is refused, naming the field`, () => {
    assert.throws(
      () => parseTopology(doc, 'bad.json'),
      (err: unknown) => err instanceof DocaError && err.code === 'DOCA_ERROR_BAD_CONFIG' && message.test(err.message),
    );
  });
}

test('the CLI reads --topology and $SOFTDPU_TOPOLOGY, and refuses a bad file with the field named', { timeout: 60_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const file = join(dir, 'two.json');
  writeFileSync(file, JSON.stringify(twoDpus));
  const viaOption = await runCli(t, ['devices', '--json', '--fabric', dir, '--topology', file]);
  assert.equal(viaOption.exit.code, 0, viaOption.stderr);
  const listed = JSON.parse(viaOption.stdout) as { topology: string; devices: { pci: string; caps: { comch: { server: boolean; client: boolean } } }[] };
  assert.equal(listed.topology, file);
  assert.equal(listed.devices.length, 7);
  assert.deepEqual(listed.devices.find((d) => d.pci === '0000:04:00.1')!.caps.comch, { ...listed.devices.find((d) => d.pci === '0000:04:00.1')!.caps.comch, server: true, client: false });
  const viaEnv = await runCli(t, ['devices', '--json', '--fabric', dir], { SOFTDPU_TOPOLOGY: file });
  assert.equal(JSON.parse(viaEnv.stdout).devices.length, 7);
  const broken = join(dir, 'broken.json');
  writeFileSync(broken, JSON.stringify({ dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00' }] }] }));
  const refused = await runCli(t, ['devices', '--fabric', dir, '--topology', broken]);
  assert.equal(refused.exit.code, 1);
  assert.match(refused.stderr, /\$\.dpus\[0\]\.host\[0\]\.pci: "b1:00" is not a PCI address.*DOCA_ERROR_BAD_CONFIG/);
  const notJson = join(dir, 'nope.json');
  writeFileSync(notJson, '{');
  assert.match((await runCli(t, ['devices', '--fabric', dir, '--topology', notJson])).stderr, /nope\.json is not JSON/);
});

test('PCI addresses parse in both forms and compare equal', () => {
  const a = PciAddress.tryParse('b1:00.2')!;
  assert.equal(a.toString(), '0000:b1:00.2');
  assert.ok(a.equals('0000:B1:00.2'));
  assert.ok(!a.equals('b1:00.3'));
  for (const bad of ['b1:00', 'b1:20.0', 'b1:00.8', '00000:b1:00.0', 'g1:00.0', '']) assert.equal(PciAddress.tryParse(bad), undefined, bad);
});
