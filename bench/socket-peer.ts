/**
 * The Node alternative for the comch benchmarks: messages of SIZE bytes (default 64) on a Unix socket
 * between processes. Echo sides stop when the client closes; every side that answers or pings prints its
 * CPU time (user + system) per message.
 *   echo  PATH [SIZE]            server, callback style: writes back every chunk from its 'data' event
 *   ping  PATH N [SIZE]          client, callback style: N round trips, the next sent from the 'data' event
 *                                that completes a reply; prints {"p50_us","p99_us","cpu_us_per_msg"}
 *   promise-echo PATH [SIZE]     server, promise style: for await (chunk of socket) await write(chunk)
 *   promise-ping PATH N [SIZE]   client, promise style: await write(msg), then await the reply through
 *                                the socket's async iterator
 *   sink  PATH N [SIZE]          server: counts N messages of SIZE bytes, prints {"rate","gbps","whole_rate"}
 *                                (lib/measure.ts StreamClock: after the warm-up, and over every message)
 *   flood PATH N [SIZE [BATCH]]  client: N messages, BATCH (default 1) copied into one buffer per
 *                                socket.write, respecting backpressure; with SOFTDPU_BENCH_ALLOC=1 and
 *                                BATCH 1, also its allocation per message (lib/alloc.ts): {"alloc": {...}}
 *   idle-server PATH / idle-client PATH   connect, then sit for 1 s; print {"cpu_pct"} of that second
 */
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { allocMeterFromEnv, cpuMeter, idleCpu, printCpu, printRtt, StreamClock } from './lib.js';

const [role, path, ...rest] = process.argv.slice(2);
const n = Number(role!.endsWith('echo') || role === 'idle-server' ? 0 : rest[0]);
const size = Number((role!.endsWith('echo') ? rest[0] : rest[1]) ?? 64);
const batch = Number(rest[2] ?? 1);
const MSG = Buffer.alloc(size, 0x61);

const write = (socket: Socket, data: Uint8Array) => new Promise<void>((resolve, reject) => socket.write(data, (err) => (err ? reject(err) : resolve())));

/** A server for one client: `serve` gets the socket; the server closes when the client does. */
function serve(onSocket: (socket: Socket) => void): void {
  const server = createServer((socket: Socket) => {
    socket.on('close', () => server.close());
    onSocket(socket);
  });
  server.listen(path, () => process.stdout.write('ready\n'));
}

/** Echo-side CPU: from the first byte to the client's close, per SIZE bytes answered. */
function echoMeter(socket: Socket): (bytes: number) => void {
  let cpu: (() => number) | undefined;
  let total = 0;
  socket.on('close', () => printCpu(cpu ? cpu() : 0, total / size));
  return (bytes) => {
    cpu ??= cpuMeter();
    total += bytes;
  };
}

async function client(): Promise<Socket> {
  const socket = connect(path!);
  await once(socket, 'connect');
  return socket;
}

if (role === 'echo') {
  serve((socket) => {
    const meter = echoMeter(socket);
    socket.on('data', (chunk: Buffer) => {
      meter(chunk.length);
      socket.write(chunk);
    });
  });
} else if (role === 'promise-echo') {
  serve(async (socket) => {
    const meter = echoMeter(socket);
    for await (const chunk of socket as AsyncIterable<Buffer>) {
      meter(chunk.length);
      await write(socket, chunk);
    }
  });
} else if (role === 'sink') {
  serve((socket) => {
    let bytes = 0;
    const clock = new StreamClock(n);
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      clock.at(Math.floor(bytes / size));
      if (bytes >= n * size) {
        process.stdout.write(JSON.stringify(clock.figures(size)) + '\n');
        socket.end();
      }
    });
  });
} else if (role === 'ping') {
  const socket = await client();
  const samples: number[] = [];
  let pending = size;
  let t0 = 0;
  const meter = allocMeterFromEnv(n);
  const cpu = cpuMeter();
  const finished = new Promise<void>((done) =>
    socket.on('data', (chunk: Buffer) => {
      pending -= chunk.length;
      if (pending > 0) return;
      samples.push((performance.now() - t0) * 1000);
      meter.tick();
      if (samples.length === n) return done();
      t0 = performance.now();
      pending = size;
      socket.write(MSG);
    }),
  );
  t0 = performance.now();
  socket.write(MSG);
  await finished;
  const cpuUs = cpu();
  printRtt(samples, cpuUs, { alloc: await meter.figures() });
  socket.end();
} else if (role === 'promise-ping') {
  const socket = await client();
  const replies = (socket as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const samples: number[] = [];
  const cpu = cpuMeter();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await write(socket, MSG);
    for (let got = 0; got < size; ) {
      const { value, done } = await replies.next();
      if (done) throw new Error('socket-peer promise-ping: the echo side closed early');
      got += value.length;
    }
    samples.push((performance.now() - t0) * 1000);
  }
  printRtt(samples, cpu());
  socket.end();
} else if (role === 'flood') {
  const socket = await client();
  const closed = once(socket, 'close'); // the sink closes once all arrived, maybe while the meter reports
  if (batch === 1) {
    const meter = allocMeterFromEnv(n);
    for (let i = 0; i < n; i++) {
      if (!socket.write(MSG)) await once(socket, 'drain');
      meter.tick();
    }
    const alloc = await meter.figures();
    if (alloc) process.stdout.write(JSON.stringify({ alloc }) + '\n');
  } else {
    for (let i = 0; i < n; ) {
      const k = Math.min(batch, n - i);
      const chunk = Buffer.allocUnsafe(k * size);
      for (let j = 0; j < k; j++) MSG.copy(chunk, j * size); // what a batching sender does: copy each message in
      i += k;
      if (!socket.write(chunk)) await once(socket, 'drain');
    }
  }
  await closed;
} else if (role === 'idle-server') {
  serve(async (socket) => {
    const pct = await idleCpu(() => sleep(1000));
    process.stdout.write(JSON.stringify({ cpu_pct: pct }) + '\n');
    socket.end();
  });
} else if (role === 'idle-client') {
  const socket = await client();
  const closed = once(socket, 'close');
  const pct = await idleCpu(() => sleep(1000));
  process.stdout.write(JSON.stringify({ cpu_pct: pct }) + '\n');
  await closed;
} else {
  throw new Error(`socket-peer: unknown role ${role}`);
}
