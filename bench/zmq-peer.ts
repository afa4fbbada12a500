/**
 * zeromq's ipc:// transport streaming the fast-path benchmark's payloads, as a further baseline:
 *   pull ADDR N SIZE   binds, counts N messages of SIZE bytes, prints {"rate","gbps","whole_rate"}
 *                      (lib/measure.ts StreamClock: after the warm-up, and over every message)
 *   push ADDR N SIZE   connects and sends N messages of SIZE bytes
 * The pusher stays until the puller acknowledges on ADDR.ack: zeromq.js drops what is still queued
 * when a process exits (a few hundred 64-byte messages here, whatever the linger).
 */
import { Pull, Push } from 'zeromq';
import { StreamClock } from './lib/measure.js';

const [role, addr, count, sizeArg] = process.argv.slice(2);
const n = Number(count);
const size = Number(sizeArg);

if (role === 'pull') {
  const sock = new Pull();
  await sock.bind(addr!);
  process.stdout.write('ready\n');
  let got = 0;
  const clock = new StreamClock(n);
  for await (const [msg] of sock) {
    if (msg!.length !== size) throw new Error(`zmq pull: got ${msg!.length} bytes, expected ${size}`);
    clock.at(++got);
    if (got === n) break;
  }
  const ack = new Push({ linger: 2000 });
  ack.connect(`${addr}.ack`);
  await ack.send('done');
  process.stdout.write(JSON.stringify(clock.figures(size)) + '\n');
  sock.close();
  ack.close();
} else if (role === 'push') {
  const ack = new Pull();
  await ack.bind(`${addr}.ack`);
  const sock = new Push();
  sock.connect(addr!);
  const msg = Buffer.alloc(size, 0x61);
  for (let i = 0; i < n; i++) await sock.send(msg);
  await ack.receive();
  sock.close();
  ack.close();
} else {
  throw new Error(`zmq-peer: unknown role ${role}`);
}
