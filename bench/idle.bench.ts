/**
 * Idle benchmark: is "asleep" asleep? A connected comch server and client (the README's pattern: each on
 * its own engine under pe.run(), each waiting in a message iterator) and two sync event processes, each
 * with an async wait pending, sit for 1 s; each process reports its CPU time over that second as % of one
 * core (target < 1%), next to Node processes holding a connected Unix socket for the same second.
 */
import { join } from 'node:path';
import { medians, printScenarios, repeat, scenario, serverAndClientBoth, withTempDir } from './lib.js';

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
    // The socket pair is the baseline of every scenario: measured once, when the first one needs it.
    let socketPair: Promise<{ server_cpu_pct: number; client_cpu_pct: number }> | undefined;
    const socket = () => (socketPair ??= pair(['socket-peer', ['idle-server', sock]], ['socket-peer', ['idle-client', sock]]));
    let comchPair: ReturnType<typeof socket> | undefined;
    let syncEventPair: ReturnType<typeof socket> | undefined;
    const comch = () => (comchPair ??= pair(['promise-peer', ['idle-server', 'idle']], ['promise-peer', ['idle-client', 'idle']]));
    const syncEvent = () => (syncEventPair ??= pair(['sync-event-peer', ['idle-a', blobs]], ['sync-event-peer', ['idle-b', blobs]]));
    const cases = [
      ['comch_server', 'comch server, connected, in server.messages()', comch, 'server'],
      ['comch_client', 'comch client, connected, in connection.messages()', comch, 'client'],
      ['sync_event_creator', 'sync event creator, async wait pending', syncEvent, 'server'],
      ['sync_event_importer', 'sync event importer, async wait pending', syncEvent, 'client'],
    ] as const;
    for (const [id, title, measure, side] of cases) {
      await scenario(id, async () => ({
        title,
        metric: 'cpu_pct',
        softdpu: { cpu_pct: (await measure())[`${side}_cpu_pct`] },
        baselines: { [`socket_${side}`]: { label: `socket ${side}`, cpu_pct: (await socket())[`${side}_cpu_pct`] } },
        targets: [{ metric: 'cpu_pct', op: '<', limit: 1 }],
      }));
    }
    printScenarios('idle for 1 s under pe.run(), asleep: CPU of each process, % of one core (user + system)');
    return {};
  });
}
