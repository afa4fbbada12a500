/**
 * Idle benchmark: is "asleep" asleep? A connected comch server and client (the README's pattern: each on
 * its own engine under pe.run(), each waiting in a message iterator) and two sync event processes, each
 * with an async wait pending, sit for 1 s; each process reports its CPU time over that second as % of one
 * core (target < 1%), next to Node processes holding a connected Unix socket for the same second.
 */
import { join } from 'node:path';
import { medians, printTable, ratio, repeat, type Row, serverAndClientBoth, target, withTempDir } from './lib.js';

type Pct = { cpu_pct: number };

export async function idleBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const env = { SOFTDPU_FABRIC: dir };
    const pair = async (server: [string, string[]], client: [string, string[]]) => {
      const runs = await repeat(async () => {
        const { server: s, client: c } = await serverAndClientBoth<Pct, Pct>(server, client, env);
        return { server_cpu_pct: s.cpu_pct, client_cpu_pct: c.cpu_pct };
      });
      return medians(runs);
    };
    const sock = join(dir, 'idle.sock');
    const blobs = join(dir, 'blobs');
    const comch = await pair(['promise-peer', ['idle-server', 'idle']], ['promise-peer', ['idle-client', 'idle']]);
    const syncEvent = await pair(['sync-event-peer', ['idle-a', blobs]], ['sync-event-peer', ['idle-b', blobs]]);
    const socket = await pair(['socket-peer', ['idle-server', sock]], ['socket-peer', ['idle-client', sock]]);
    const pct = (x: number) => `${x.toFixed(3)} %`;
    const row = (what: string, soft: number, ref: number, refLabel: string): Row => ({ what, softdpu: pct(soft), reference: `${pct(ref)} (${refLabel})`, ratio: ref > 0 ? ratio(soft / ref) : '-', target: target(soft, '<', 1, '%') });
    const rows: Row[] = [
      row('comch server, connected, in server.messages()', comch.server_cpu_pct, socket.server_cpu_pct, 'socket server'),
      row('comch client, connected, in connection.messages()', comch.client_cpu_pct, socket.client_cpu_pct, 'socket client'),
      row('sync event creator, async wait pending', syncEvent.server_cpu_pct, socket.server_cpu_pct, 'socket server'),
      row('sync event importer, async wait pending', syncEvent.client_cpu_pct, socket.client_cpu_pct, 'socket client'),
    ];
    printTable('idle for 1 s under pe.run(), asleep: CPU of each process, % of one core (user + system)', rows);
    return { comch_readme_pair: comch, sync_event_async_waiters: syncEvent, socket_pair: socket };
  });
}
