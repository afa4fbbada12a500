// The host side of a comch echo (examples/echo-dpu.mjs is the other): sends two texts, prints the replies.
import { ComchClient, ProgressEngine, openDeviceByPci } from 'softdpu';

const pe = ProgressEngine.create();
const client = ComchClient.create(openDeviceByPci('b1:00.0'), 'echo');
pe.connectCtx(client);
client.taskSendSetConf(() => {}, () => {}, 16);
client.start();
const stop = new AbortController();
const driving = pe.run({ signal: stop.signal, until: () => false }); // progress from the event loop
const connection = await client.connected({ timeoutMs: 10_000 });
const replies = connection.messages();
for (const text of ['hello', 'bye']) {
  await connection.send(new TextEncoder().encode(text));
  const { value } = await replies.next();
  console.log('echoed:', new TextDecoder().decode(value));
}
await replies.return();
stop.abort();
await driving;
await client[Symbol.asyncDispose](); // stop, wait for IDLE, destroy (`await using` in TypeScript)
