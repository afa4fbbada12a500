// The host side of a comch echo that survives a device that says AGAIN and a DPU that dies: sends
// COUNT numbered messages to examples/retry-dpu.mjs and checks every echo. A submission refused with
// AGAIN is retried (the same task: a refused task is unchanged and still ours) with a growing pause, up
// to MAX_ATTEMPTS; a DPU that goes away is waited for and reconnected to, and the message whose echo was
// lost is sent again. docs/faults.md runs it under a fault plan.
import { setTimeout as sleep } from 'node:timers/promises';
import { ComchClient, DocaError, ProgressEngine, openDeviceByPci } from 'softdpu';

const COUNT = Number(process.env.RETRY_COUNT ?? 20);
const MAX_ATTEMPTS = 8;
const dev = openDeviceByPci('b1:00.0');
const pe = ProgressEngine.create();
const stop = new AbortController();
const driving = pe.run({ signal: stop.signal, until: () => false });

/** A new client and its connection (the DPU side may be restarting: give it 10 s). */
async function connect() {
  const client = ComchClient.create(dev, 'retry');
  pe.connectCtx(client);
  client.taskSendSetConf(() => {}, () => {}, 4);
  client.start();
  return { client, connection: await client.connected({ timeoutMs: 10_000 }) };
}

/** Sends `bytes`, resubmitting the same task while the device says AGAIN; returns the attempts made. */
async function send(client, connection, bytes) {
  const task = client.taskSendAllocInit(connection, bytes);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await task.submitAsync();
        return attempt;
      } catch (err) {
        if (!DocaError.is(err, 'AGAIN')) throw err;
        if (attempt === MAX_ATTEMPTS) throw new DocaError('AGAIN', 'retry-host', `still AGAIN after ${MAX_ATTEMPTS} attempts; giving up`);
        await sleep(Math.min(2 ** attempt, 50));
      }
    }
  } finally {
    task.free();
  }
}

/** What a DPU that went away looks like from here: its connection ended, or the client stopped with it. */
const peerGone = (err) => ['CONNECTION_RESET', 'NOT_CONNECTED', 'BAD_STATE'].some((code) => DocaError.is(err, code));

let next = 0;
let retries = 0;
let reconnects = 0;
try {
  while (next < COUNT) {
    const { client, connection } = await connect();
    const replies = connection.messages({ timeoutMs: 5000 });
    try {
      while (next < COUNT) {
        const text = `msg ${next}`;
        retries += (await send(client, connection, new TextEncoder().encode(text))) - 1;
        const { value, done } = await replies.next();
        if (done) throw new DocaError('NOT_CONNECTED', 'retry-host', `the connection ended before the echo of "${text}"`);
        if (new TextDecoder().decode(value) !== text) throw new Error(`"${text}" came back as "${new TextDecoder().decode(value)}"`);
        next++;
      }
    } catch (err) {
      if (!peerGone(err)) throw err;
      reconnects++;
      console.log(`peer lost after ${next} echoes (${err.code}); reconnecting`);
    } finally {
      await replies.return();
      await client[Symbol.asyncDispose]();
    }
  }
  console.log(`done: ${COUNT} echoes, ${retries} retried submissions, ${reconnects} reconnection(s)`);
} catch (err) {
  console.log(`failed at message ${next}: ${err.message}`);
  process.exitCode = 1;
} finally {
  stop.abort();
  await driving;
}
