/**
 * One side of the fabric ping-pong: `ping` measures round trips and prints them as JSON, `pong` echoes.
 * Two words on separate cache lines of one segment; waiting is an Atomics.load spin or futex sleeps.
 */
import { decodeDescriptor, Segment } from '../src/fabric/segment.js';
import { percentiles } from './lib.js';

export const PING = 64;
export const PONG = 128;
const READY = 192;

function awaitValue(seg: Segment, offset: number, target: number, sleep: boolean): void {
  const i = offset / 4;
  let v: number;
  while ((v = Atomics.load(seg.i32, i)) !== target) {
    if (sleep) seg.wait(offset, v, 1000);
  }
}

const [role, hex, mode, count] = process.argv.slice(2);
const bytes = Buffer.from(hex!, 'hex');
const seg = Segment.open(decodeDescriptor(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0, 'bench'));
const sleep = mode === 'futex';
const n = Number(count);
if (role === 'pong') {
  Atomics.store(seg.i32, READY / 4, 1);
  for (let i = 1; i <= n; i++) {
    awaitValue(seg, PING, i, sleep);
    Atomics.store(seg.i32, PONG / 4, i);
    if (sleep) seg.wake(PONG, 1);
  }
} else {
  // Not forever if pong never comes (the clock is read every 4096 turns).
  const deadline = Date.now() + 30_000;
  for (let turn = 0; Atomics.load(seg.i32, READY / 4) === 0; turn++) {
    if ((turn & 0xfff) === 0 && Date.now() > deadline) {
      process.stderr.write('fabric-peer ping: pong did not get ready within 30 s\n');
      process.exit(1);
    }
  }
  const samples = new Array<number>(n);
  for (let i = 1; i <= n; i++) {
    const t0 = performance.now();
    Atomics.store(seg.i32, PING / 4, i);
    if (sleep) seg.wake(PING, 1);
    awaitValue(seg, PONG, i, sleep);
    samples[i - 1] = (performance.now() - t0) * 1000;
  }
  const { p50, p99 } = percentiles(samples);
  process.stdout.write(JSON.stringify({ p50_us: p50, p99_us: p99 }) + '\n');
}
seg.close();
