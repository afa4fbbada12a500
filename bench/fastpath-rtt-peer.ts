/**
 * Fast-path round trips with both sides asleep between messages (engines in notify mode, callbacks;
 * every context of a side on that side's one engine):
 *   echo SIZE N   server: a consumer with 2 posted buffers of SIZE bytes and a producer; sends every
 *                 payload back to the client's consumer from the buffer it arrived in, reposting the buffer
 *                 once that send completed; prints {"cpu_us_per_msg"}
 *   ping SIZE N   client: the same endpoints; N round trips of SIZE bytes, each sent from the callback of
 *                 the previous reply; prints {"p50_us","p99_us","cpu_us_per_msg"}
 */
import { ComchClient } from '../src/comch/client.js';
import { ComchServer } from '../src/comch/server.js';
import { openDeviceByPci, openRepresentorByPci } from '../src/core/dev.js';
import { DevinfoRepFilter } from '../src/core/devinfo.js';
import { ProgressEngine } from '../src/core/pe.js';
import { printCpu, printRtt } from './lib.js';
import { ARM, fastpathEcho, fastpathPinger, HOST, watchdog } from './peer-lib.js';

const [role, sizeArg, count] = process.argv.slice(2);
const size = Number(sizeArg);
const n = Number(count);
const NAME = 'fastpath-rtt';
watchdog(`fastpath-rtt-peer ${role}`);

const pe = ProgressEngine.create();
const peerConsumers: number[] = [];
const side = { pe, size, posted: 2, peerConsumers, mode: 'notify' } as const;
if (role === 'echo') {
  const dev = openDeviceByPci(ARM);
  const server = ComchServer.create(dev, openRepresentorByPci(dev, DevinfoRepFilter.NET, HOST), NAME);
  pe.connectCtx(server);
  server.eventConsumerRegister((_e, _c, id) => peerConsumers.push(id), () => {});
  server.taskSendSetConf((t) => t.free(), (t) => t.free(), 4);
  server.start();
  process.stdout.write('ready\n');
  await pe.run({ until: () => server.connections.length > 0 });
  const echo = await fastpathEcho({ ...side, dev, conn: server.connections[0]! });
  await pe.run({ until: () => echo.echoed() >= n });
  printCpu(echo.cpuUs(), echo.echoed());
  await pe.run({ until: () => server.connections.length === 0 }); // the client leaves first
  await server.stopTree({ timeoutMs: 5000 });
} else {
  const dev = openDeviceByPci(HOST);
  const client = ComchClient.create(dev, NAME);
  pe.connectCtx(client);
  client.eventConsumerRegister((_e, _c, id) => peerConsumers.push(id), () => {});
  client.taskSendSetConf((t) => t.free(), (t) => t.free(), 4);
  client.start();
  await pe.run({ until: () => client.state === 'RUNNING' });
  const pinger = await fastpathPinger({ ...side, dev, conn: client.getConnection() });
  const { samples, cpuUs } = await pinger.run(n);
  printRtt(samples, cpuUs);
  await client.stopTree({ timeoutMs: 5000 });
}
