/** Devices and representors on each side, PCI address forms, open/close reference counts, capabilities. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import * as comch from '../src/comch/caps.js';
import { Dev, DevRep, devinfoRepCreateList, openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { devinfoCreateList, devinfoDestroyList, DevinfoRepFilter, devinfoRepDestroyList, PciFuncType } from '../src/core/devinfo.js';
import { mmapCapIsCreateFromExportPciSupported, mmapCapIsExportPciSupported } from '../src/core/mmap.js';
import { Fabric } from '../src/fabric/fabric.js';
import * as se from '../src/sync-event/caps.js';
import { tempFabricDir } from './helpers/fabric.js';
import { code } from './helpers/errors.js';

function fabric(t: TestContext, topology?: unknown): Fabric {
  const dir = tempFabricDir(t);
  if (!topology) return Fabric.open({ dir });
  const file = join(dir, 'topology.json');
  writeFileSync(file, JSON.stringify(topology));
  return Fabric.open({ dir, topology: file });
}

test('the device list reports what doca_devinfo_* exposes', (t) => {
  const list = devinfoCreateList({ fabric: fabric(t) });
  assert.deepEqual(list.map((d) => [d.getPciAddrStr(), d.side]), [
    ['0000:03:00.0', 'dpu'],
    ['0000:b1:00.0', 'host'],
    ['0000:b1:00.2', 'host'],
    ['0000:b1:00.3', 'host'],
  ]);
  const arm = list[0]!;
  assert.equal(arm.getIbdevName(), 'mlx5_0');
  assert.equal(arm.getIfaceName(), 'p0');
  assert.deepEqual([...arm.getMac()], [0x02, 0x00, 0x0d, 0x03, 0x00, 0x00]);
  assert.equal(arm.getIpv4().length, 4);
  assert.equal(arm.getIpv6().length, 16);
  assert.equal(typeof arm.getVhcaId(), 'number');
  assert.equal(arm.getActiveRate(), 200e9);
  assert.equal(arm.capIsHotplugManagerSupported(), true);
  assert.equal(list[1]!.capIsHotplugManagerSupported(), false);
  devinfoDestroyList(list);
  assert.throws(() => arm.getPciAddrStr(), code('DOCA_ERROR_BAD_STATE', /list .* was destroyed/));
  assert.throws(() => devinfoDestroyList(list), code('DOCA_ERROR_BAD_STATE'));
});

test('PCI addresses compare in both written forms; malformed ones are INVALID_VALUE', (t) => {
  const [arm] = devinfoCreateList({ fabric: fabric(t) });
  for (const same of ['03:00.0', '0000:03:00.0', '0000:03:00.0'.toUpperCase()]) assert.equal(arm!.isEqualPciAddr(same), true, same);
  assert.equal(arm!.isEqualPciAddr('03:00.1'), false);
  assert.equal(arm!.isEqualPciAddr('0001:03:00.0'), false);
  for (const bad of ['03:00', '3:00.0', 'xx:00.0', '03:00.0.0', '']) {
    assert.throws(() => arm!.isEqualPciAddr(bad), code('DOCA_ERROR_INVALID_VALUE', new RegExp(`"${bad.replace('.', '\\.')}" is not a PCI address`)));
  }
});

test('opening a device again adds a reference; the last close is refused while something uses it', (t) => {
  const f = fabric(t);
  const dev = openDeviceByPci('03:00.0', { fabric: f });
  const again = openDeviceByPci('0000:03:00.0', { fabric: f });
  assert.equal(again, dev, 'one device, two references');
  const [rep] = devinfoRepCreateList(dev, DevinfoRepFilter.NET);
  const opened = DevRep.open(rep!);
  dev.close();
  assert.throws(() => dev.close(), code('DOCA_ERROR_IN_USE', /representor 0000:b1:00\.0/));
  assert.equal(dev.isOpen, true, 'the refused close changed nothing');
  opened.close();
  dev.close();
  assert.equal(dev.isOpen, false);
  assert.throws(() => dev.close(), code('DOCA_ERROR_BAD_STATE', /already closed/));
  assert.throws(() => openDeviceByPci('05:00.0', { fabric: f }), code('DOCA_ERROR_NOT_FOUND', /05:00\.0/));
  assert.notEqual(openDeviceByPci('03:00.0', { fabric: f }), dev, 'a closed device opens afresh');
});

const emulatedTopology = {
  dpus: [
    {
      arm: [{ pci: '03:00.0' }],
      host: [{ pci: 'b1:00.0' }, { pci: 'b1:00.2', type: 'VF' }, { pci: 'b1:00.4', type: 'SF', sfnum: 3 }, { pci: 'b1:01.0', emulated: true, hotplug: true }],
    },
  ],
};

test('representors exist on the DPU side, filtered by ALL, NET and EMULATED', (t) => {
  const dev = openDeviceByPci('03:00.0', { fabric: fabric(t, emulatedTopology) });
  const addrs = (filter: number) => devinfoRepCreateList(dev, filter).map((r) => r.getPciAddrStr());
  assert.deepEqual(addrs(DevinfoRepFilter.ALL), ['0000:b1:00.0', '0000:b1:00.2', '0000:b1:00.4', '0000:b1:01.0']);
  assert.deepEqual(addrs(DevinfoRepFilter.NET), ['0000:b1:00.0', '0000:b1:00.2', '0000:b1:00.4']);
  assert.deepEqual(addrs(DevinfoRepFilter.EMULATED), ['0000:b1:01.0']);
  assert.deepEqual(addrs(DevinfoRepFilter.NET | DevinfoRepFilter.EMULATED).length, 4);
  const list = devinfoRepCreateList(dev, DevinfoRepFilter.ALL);
  assert.deepEqual(list.map((r) => r.getPciFuncType()), [PciFuncType.PF, PciFuncType.VF, PciFuncType.SF, PciFuncType.PF]);
  assert.deepEqual(list.map((r) => r.getIfaceName()), ['pf0hpf', 'pf0vf0', 'en3f0pf0sf3', 'pf1hpf']);
  assert.equal(list[3]!.getIsHotplug(), true);
  assert.ok(list[0]!.getVuid().length > 0);
  assert.equal(list[1]!.isEqualPciAddr('b1:00.2'), true);
  devinfoRepDestroyList(list);
  assert.throws(() => list[0]!.getVuid(), code('DOCA_ERROR_BAD_STATE'));
  assert.throws(() => devinfoRepCreateList(dev, 1), code('DOCA_ERROR_INVALID_VALUE', /filter 1/));
  const rep = openRepresentorByPci(dev, DevinfoRepFilter.NET, 'b1:00.2');
  assert.equal(rep.asDevinfo().getPciAddrStr(), '0000:b1:00.2');
  assert.equal(rep.dev, dev);
  assert.throws(() => openRepresentorByPci(dev, DevinfoRepFilter.NET, 'b1:01.0'), code('DOCA_ERROR_NOT_FOUND'));
});

test('representor lists are NOT_SUPPORTED on the host side', (t) => {
  const host = openDeviceByPci('b1:00.0', { fabric: fabric(t) });
  assert.throws(() => devinfoRepCreateList(host, DevinfoRepFilter.NET), code('DOCA_ERROR_NOT_SUPPORTED', /representors are only available on the DPU/));
  assert.equal(host.asDevinfo().repCapIsFilterNetSupported(), false);
});

test('capabilities answer from the topology: server only on the DPU, client only on the host', (t) => {
  const f = fabric(t, { caps: { comch: { maxMsgSize: 512, maxClients: 3 }, syncEvent: { exportToRemoteNet: false } }, dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.0' }] }] });
  const [arm, host] = devinfoCreateList({ fabric: f });
  assert.equal(comch.comchCapServerIsSupported(arm!), true);
  assert.equal(comch.comchCapClientIsSupported(arm!), false);
  assert.equal(comch.comchCapServerIsSupported(host!), false);
  assert.equal(comch.comchCapClientIsSupported(host!), true);
  assert.equal(comch.comchCapGetMaxMsgSize(host!), 512);
  assert.equal(comch.comchCapGetMaxClients(arm!), 3);
  assert.equal(comch.comchCapGetMaxNameLen(arm!), 128);
  assert.equal(comch.comchCapGetMaxRecvQueueSize(arm!), 4096);
  assert.equal(comch.comchCapGetMaxSendTasks(arm!), 8192);
  assert.equal(comch.comchConsumerCapGetMaxImmDataLen(host!), 32);
  assert.equal(comch.comchConsumerCapGetMaxBufListLen(host!), 1);
  assert.equal(comch.comchConsumerCapIsSupported(arm!), true);
  assert.equal(comch.comchProducerCapGetMaxProducers(arm!), 64);
  assert.equal(comch.comchProducerCapGetMaxBufSize(arm!), 1 << 30);
  assert.equal(se.syncEventCapIsExportToRemoteNetSupported(arm!), false);
  assert.equal(se.syncEventCapIsExportToRemotePciSupported(arm!), true);
  assert.equal(se.syncEventCapIsExportToGpuSupported(host!), false);
  assert.equal(se.syncEventCapIsExportToDpaSupported(host!), true);
  assert.equal(se.syncEventCapRemoteNetIsExportToDpaSupported(arm!), true);
  assert.equal(se.syncEventCapTaskWaitEqIsSupported(host!), true);
  assert.equal(mmapCapIsExportPciSupported(host!), true);
  assert.equal(mmapCapIsCreateFromExportPciSupported(arm!), true);
  assert.equal(Dev.open(host!).asDevinfo().side, 'host');
});
