/** Buffers and inventories: ranges checked against the map, data windows, u16 reference counts. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BufInventory } from '../src/core/buf.js';
import { Mmap } from '../src/core/mmap.js';
import { code } from './helpers/errors.js';

function setup(size = 4096, elements = 4) {
  const mem = Buffer.alloc(size);
  const map = Mmap.create();
  map.setMemrange(mem);
  map.start();
  const inv = BufInventory.create(elements);
  inv.start();
  return { mem, map, inv };
}

test('get by addr is an empty buffer, get by data a full one, get by args anything in between', () => {
  const { mem, map, inv } = setup();
  const empty = inv.bufGetByAddr(map, mem.subarray(100, 200));
  assert.deepEqual([empty.getLen(), empty.getDataLen(), empty.getHead().byteOffset, empty.getData().length], [100, 0, 100, 0]);
  const full = inv.bufGetByData(map, mem.subarray(300, 364));
  assert.deepEqual([full.getLen(), full.getDataLen(), full.getData().byteOffset], [64, 64, 300]);
  const mid = inv.bufGetByArgs(map, mem.subarray(1000, 2000), mem.subarray(1500, 1600));
  assert.deepEqual([mid.getLen(), mid.getDataLen(), mid.getData().byteOffset], [1000, 100, 1500]);
  mem[1500] = 7;
  assert.equal(mid.getData()[0], 7, 'views share the memory');
  assert.equal(map.getNumBufs(), 3);
  assert.equal(inv.getNumFreeElements(), 1);
});

test('ranges outside the map, or data outside the head, are INVALID_VALUE and take nothing', () => {
  const { mem, map, inv } = setup();
  const other = Buffer.alloc(64);
  assert.throws(() => inv.bufGetByAddr(map, other), code('DOCA_ERROR_INVALID_VALUE', /not inside the memory range/));
  assert.throws(() => inv.bufGetByArgs(map, mem.subarray(0, 10), mem.subarray(5, 20)), code('DOCA_ERROR_INVALID_VALUE', /\[5, 20\) is not inside the head region \[0, 10\)/));
  assert.equal(inv.getNumFreeElements(), 4);
  const buf = inv.bufGetByAddr(map, mem.subarray(0, 100));
  buf.setData(mem.subarray(10, 30));
  assert.equal(buf.getDataLen(), 20);
  assert.throws(() => buf.setData(mem.subarray(90, 110)), code('DOCA_ERROR_INVALID_VALUE'));
  assert.throws(() => buf.setDataLen(91), code('DOCA_ERROR_INVALID_VALUE', /data length 91 from offset 10 exceeds the 100-byte region/));
  buf.setDataLen(90);
  buf.resetDataLen();
  assert.equal(buf.getDataLen(), 0);
});

test('reference counts are u16: TOO_BIG at 65535; at zero the buffer goes back and may not be used', () => {
  const { mem, map, inv } = setup();
  const buf = inv.bufGetByAddr(map, mem.subarray(0, 8));
  assert.equal(buf.getRefcount(), 1);
  for (let i = 1; i < 0xffff; i++) assert.equal(buf.incRefcount(), i);
  assert.throws(() => buf.incRefcount(), code('DOCA_ERROR_TOO_BIG', /65535/));
  for (let i = 0xffff; i > 1; i--) assert.equal(buf.decRefcount(), i);
  assert.equal(inv.getNumFreeElements(), 3);
  assert.equal(buf.decRefcount(), 1);
  assert.equal(inv.getNumFreeElements(), 4);
  assert.equal(map.getNumBufs(), 0);
  assert.throws(() => buf.decRefcount(), code('DOCA_ERROR_BAD_STATE', /already 0/));
  assert.throws(() => buf.getData(), code('DOCA_ERROR_BAD_STATE', /released/));
  assert.throws(() => buf.incRefcount(), code('DOCA_ERROR_BAD_STATE'));
});

test('an exhausted inventory is NO_MEMORY; destroying it with buffers out is IN_USE', () => {
  const { mem, map, inv } = setup(64, 2);
  const a = inv.bufGetByAddr(map, mem.subarray(0, 8));
  const b = inv.bufDup(a);
  assert.equal(b.getLen(), 8);
  assert.throws(() => inv.bufGetByAddr(map, mem.subarray(8, 16)), code('DOCA_ERROR_NO_MEMORY', /all 2 elements/));
  assert.throws(() => inv.destroy(), code('DOCA_ERROR_IN_USE', /2 buffer/));
  inv.expand(1);
  inv.bufGetByAddr(map, mem.subarray(8, 16)).decRefcount();
  a.decRefcount();
  b.decRefcount();
  inv.destroy();
  assert.throws(() => inv.bufGetByAddr(map, mem.subarray(0, 8)), code('DOCA_ERROR_BAD_STATE', /destroyed/));
});

test('buffers need a started inventory and a started map', () => {
  const mem = Buffer.alloc(64);
  const map = Mmap.create();
  map.setMemrange(mem);
  const inv = BufInventory.create(1);
  inv.start();
  assert.throws(() => inv.bufGetByAddr(map, mem), code('DOCA_ERROR_BAD_STATE', /not started/));
  map.start();
  const stopped = BufInventory.create(1);
  assert.throws(() => stopped.bufGetByAddr(map, mem), code('DOCA_ERROR_BAD_STATE', /inventory is not started/));
  assert.throws(() => BufInventory.create(0), code('DOCA_ERROR_INVALID_VALUE'));
});
