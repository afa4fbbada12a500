// The DPU side of a comch echo: a server on Arm device 03:00.0 for host function b1:00.0.
// Run it and examples/echo-host.mjs as two processes with the same SOFTDPU_FABRIC (or none: the default).
import { ComchServer, DevinfoRepFilter, ProgressEngine, openDeviceByPci, openRepresentorByPci } from 'softdpu';

const arm = openDeviceByPci('03:00.0');
const rep = openRepresentorByPci(arm, DevinfoRepFilter.NET, 'b1:00.0');
const pe = ProgressEngine.create();
const server = ComchServer.create(arm, rep, 'echo');
pe.connectCtx(server);
server.taskSendSetConf(() => {}, () => {}, 16);
server.start();
const stop = new AbortController();
const driving = pe.run({ signal: stop.signal, until: () => false });
for await (const { connection, data } of server.messages()) {
  await connection.send(data); // echo
  if (new TextDecoder().decode(data) === 'bye') break;
}
stop.abort();
await driving;
await server[Symbol.asyncDispose](); // stop, wait for IDLE, destroy (`await using` in TypeScript)
