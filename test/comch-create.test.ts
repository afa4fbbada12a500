/** Creating servers and clients: sides, names, representors, configuration bounds and timing. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ComchClient } from '../src/comch/client.js';
import { ComchServer } from '../src/comch/server.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { ProgressEngine } from '../src/core/pe.js';
import { Fabric } from '../src/fabric/fabric.js';
import { tempFabricDir } from './helpers/fabric.js';
import { code } from './helpers/errors.js';

function fabric(t: TestContext, caps?: unknown) {
  const dir = tempFabricDir(t);
  if (!caps) return Fabric.open({ dir });
  const file = join(dir, 'topo.json');
  writeFileSync(file, JSON.stringify({ caps, dpus: [{ arm: [{ pci: '03:00.0' }], host: [{ pci: 'b1:00.0' }, { pci: 'b1:00.2', type: 'VF' }] }] }));
  return Fabric.open({ dir, topology: file });
}

test('a server on a host device and a client on the DPU side are NOT_SUPPORTED', (t) => {
  const f = fabric(t);
  const host = openDeviceByPci('b1:00.0', { fabric: f });
  const arm = openDeviceByPci('03:00.0', { fabric: f });
  const rep = openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0');
  assert.throws(() => ComchServer.create(host, rep, 'x'), code('DOCA_ERROR_NOT_SUPPORTED', /0000:b1:00\.0 is a host function; a comch server runs only on the DPU/));
  assert.throws(() => ComchClient.create(arm, 'x'), code('DOCA_ERROR_NOT_SUPPORTED', /a comch client runs only on the host/));
});

test('the longest name max_name_len allows works, one byte more is INVALID_VALUE', (t) => {
  const f = fabric(t);
  const arm = openDeviceByPci('03:00.0', { fabric: f });
  const rep = openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0');
  const host = openDeviceByPci('b1:00.0', { fabric: f });
  const longest = 'n'.repeat(127); // max_name_len 128 counts the NUL
  assert.equal(ComchServer.create(arm, rep, longest).serverName, longest);
  assert.equal(ComchClient.create(host, longest).serverName, longest);
  const tooLong = 'n'.repeat(128);
  assert.throws(() => ComchServer.create(arm, rep, tooLong), code('DOCA_ERROR_INVALID_VALUE', /128 bytes \(129 with its NUL\), more than max_name_len 128/));
  assert.throws(() => ComchClient.create(host, tooLong), code('DOCA_ERROR_INVALID_VALUE'));
  assert.throws(() => ComchServer.create(arm, rep, 'é'.repeat(64)), code('DOCA_ERROR_INVALID_VALUE', /128 bytes/), 'bytes, not characters');
  assert.throws(() => ComchServer.create(arm, rep, ''), code('DOCA_ERROR_INVALID_VALUE'));
  assert.throws(() => ComchServer.create(arm, rep, 'a\0b'), code('DOCA_ERROR_INVALID_VALUE', /NUL/));
});

test('a representor of another Arm device is refused; the server keeps its device and representor open', (t) => {
  const dir = tempFabricDir(t);
  const file = join(dir, 'two.json');
  writeFileSync(file, JSON.stringify({ dpus: [{ arm: [{ pci: '03:00.0' }, { pci: '03:00.1' }], host: [{ pci: 'b1:00.0' }, { pci: 'b1:00.1', arm: '03:00.1' }] }] }));
  const f = Fabric.open({ dir, topology: file });
  const arm0 = openDeviceByPci('03:00.0', { fabric: f });
  const arm1 = openDeviceByPci('03:00.1', { fabric: f });
  const rep1 = openRepresentorByPci(arm1, DevinfoRepFilter.NET, 'b1:00.1');
  assert.throws(() => ComchServer.create(arm0, rep1, 's'), code('DOCA_ERROR_INVALID_VALUE', /belongs to 0000:03:00\.1/));
  const server = ComchServer.create(arm1, rep1, 's');
  assert.equal(server.getDevice(), arm1);
  assert.equal(server.getDeviceRep(), rep1);
  assert.throws(() => rep1.close(), code('DOCA_ERROR_IN_USE', /doca_comch_server/));
  server.destroy();
  rep1.close();
});

test('message size and queue depth: bounded by the capabilities, configurable only while IDLE', (t) => {
  const f = fabric(t, { comch: { maxMsgSize: 300, maxRecvQueueSize: 8, maxSendTasks: 4 } });
  const arm = openDeviceByPci('03:00.0', { fabric: f });
  const rep = openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0');
  const server = ComchServer.create(arm, rep, 'sizes');
  assert.equal(server.getMaxMsgSize(), 300, 'defaults to the capability');
  assert.equal(server.getRecvQueueSize(), 8, 'defaults to 64, or the capability if smaller');
  assert.throws(() => server.setMaxMsgSize(301), code('DOCA_ERROR_INVALID_VALUE', /max_msg_size 301 is not an integer in \[1, 300\]/));
  assert.throws(() => server.setRecvQueueSize(9), code('DOCA_ERROR_INVALID_VALUE', /recv_queue_size 9/));
  assert.throws(() => server.taskSendSetConf(() => {}, () => {}, 5), code('DOCA_ERROR_INVALID_VALUE', /num_tasks 5 is not an integer in \[1, 4\]/));
  server.setMaxMsgSize(100);
  server.setRecvQueueSize(2);
  server.taskSendSetConf(() => {}, () => {}, 4);
  const pe = ProgressEngine.create();
  pe.connectCtx(server);
  assert.equal(server.start(), 'DOCA_SUCCESS');
  for (const configure of [() => server.setMaxMsgSize(50), () => server.setRecvQueueSize(1), () => server.eventMsgRecvRegister(() => {}), () => server.eventConsumerRegister(() => {}, () => {}), () => server.eventConnectionStatusChangedRegister(() => {}, () => {})]) {
    assert.throws(configure, code('DOCA_ERROR_BAD_STATE', /configuration is allowed only while IDLE/));
  }
  assert.throws(() => server.destroy(), code('DOCA_ERROR_IN_USE'));
  assert.equal(server.stop(), 'DOCA_SUCCESS');
  server.destroy();
  pe.destroy();
});

test('get_connection before RUNNING is BAD_STATE; a second server with the same name fails to start', (t) => {
  const f = fabric(t);
  const host = openDeviceByPci('b1:00.0', { fabric: f });
  const client = ComchClient.create(host, 'nobody');
  assert.throws(() => client.getConnection(), code('DOCA_ERROR_BAD_STATE', /IDLE, not RUNNING/));
  const pe = ProgressEngine.create();
  pe.connectCtx(client);
  assert.throws(() => client.start(), code('DOCA_ERROR_BAD_STATE', /doca_comch_client_task_send_set_conf/), 'DOCA: the send task callback is mandatory');
  client.taskSendSetConf(() => {}, () => {}, 1);
  assert.equal(client.start(), 'DOCA_ERROR_IN_PROGRESS');
  assert.throws(() => client.getConnection(), code('DOCA_ERROR_BAD_STATE', /STARTING/));
  assert.equal(client.stop(), 'DOCA_SUCCESS');
  const arm = openDeviceByPci('03:00.0', { fabric: f });
  const rep = openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0');
  const first = ComchServer.create(arm, rep, 'dup');
  const second = ComchServer.create(arm, rep, 'dup');
  pe.connectCtx(first);
  pe.connectCtx(second);
  for (const s of [first, second]) s.taskSendSetConf(() => {}, () => {}, 1);
  first.start();
  assert.throws(() => second.start(), code('DOCA_ERROR_ALREADY_EXIST', /named "dup" already runs on 0000:03:00\.0 for 0000:b1:00\.0/));
  assert.equal(second.state, 'IDLE');
  first.stop();
  assert.equal(second.start(), 'DOCA_SUCCESS', 'the name is free once the first server stopped');
  second.stop();
});
