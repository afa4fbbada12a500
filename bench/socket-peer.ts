/**
 * The Node alternative for the comch benchmarks: 64-byte messages on a Unix socket between processes.
 *   echo  PATH      server: answers every 64 bytes; stops when the client closes
 *   ping  PATH N    client: N round trips, prints {"p50_us","p99_us"}
 *   sink  PATH N [SIZE]   server: counts N messages of SIZE bytes (default 64), prints {"rate","gbps"}
 *   flood PATH N [SIZE]   client: N writes of SIZE bytes (one socket.write each, respecting backpressure)
 */
import { connect, createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { percentiles } from './lib.js';

const [role, path, count, sizeArg] = process.argv.slice(2);
const n = Number(count);
const size = Number(sizeArg ?? 64);
const MSG = Buffer.alloc(size, 0x61);

if (role === 'echo' || role === 'sink') {
  const server = createServer((socket: Socket) => {
    let bytes = 0;
    let first = 0;
    socket.on('data', (chunk: Buffer) => {
      if (role === 'echo') {
        socket.write(chunk);
        return;
      }
      if (bytes === 0) first = performance.now();
      bytes += chunk.length;
      if (bytes >= n * size) {
        const seconds = (performance.now() - first) / 1000;
        process.stdout.write(JSON.stringify({ rate: (n - 1) / seconds, gbps: ((n - 1) * size) / seconds / 1e9 }) + '\n');
        socket.end();
        server.close();
      }
    });
    socket.on('close', () => server.close());
  });
  server.listen(path, () => process.stdout.write('ready\n'));
} else if (role === 'ping') {
  const socket = connect(path);
  await once(socket, 'connect');
  const samples: number[] = [];
  let pending = 0;
  let t0 = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  socket.on('data', (chunk: Buffer) => {
    pending -= chunk.length;
    if (pending > 0) return;
    samples.push((performance.now() - t0) * 1000);
    if (samples.length === n) return done();
    t0 = performance.now();
    pending = 64;
    socket.write(MSG);
  });
  t0 = performance.now();
  pending = 64;
  socket.write(MSG);
  await finished;
  socket.end();
  const { p50, p99 } = percentiles(samples);
  process.stdout.write(JSON.stringify({ p50_us: p50, p99_us: p99 }) + '\n');
} else if (role === 'flood') {
  const socket = connect(path);
  await once(socket, 'connect');
  for (let i = 0; i < n; i++) if (!socket.write(MSG)) await once(socket, 'drain');
  await once(socket, 'close');
}
