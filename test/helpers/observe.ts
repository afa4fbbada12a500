/** For tests of what observers (`softdpu top`, `softdpu view`, fabric/stats-reader.ts) see. */
import type { TestContext } from 'node:test';
import type { ThreadSnapshot } from '../../src/fabric/stats-reader.js';
import { assertExit, type Child, sample, spawnChild } from './child.js';

/** A server (DPU) and a client (host) fixture on `dir`, connected, scriptable (fixtures/comch-*.ts). */
export async function fixturePair(t: TestContext, dir: string, name: string): Promise<{ server: Child; client: Child }> {
  const env = { SOFTDPU_FABRIC: dir };
  const server = spawnChild(t, 'comch-server', [JSON.stringify({ name })], { env });
  await server.waitFor(/^started DOCA_SUCCESS/);
  const client = spawnChild(t, 'comch-client', [JSON.stringify({ name })], { env });
  await client.waitFor(/^c0 state STARTING->RUNNING/);
  await server.waitFor(/^connect 1 true/);
  return { server, client };
}

/** The sample pair `samplePair` runs, as the README does; each sends its default text (23 bytes). */
export const SAMPLE_SERVER = ['comch_ctrl_path_server', '-p', '03:00.0', '-r', 'b1:00.0'];
export const SAMPLE_CLIENT = ['comch_ctrl_path_client', '-p', 'b1:00.0'];

/** NVIDIA's comch control path pair, as the README runs it (`softdpu sample`), run to its end (exit 0 both). */
export async function samplePair(t: TestContext, dir: string): Promise<{ server: Child; client: Child }> {
  const server = sample(t, dir, SAMPLE_SERVER);
  const client = sample(t, dir, SAMPLE_CLIENT);
  await assertExit(client, 0, [server]);
  await assertExit(server, 0, [client]);
  return { server, client };
}

/** A thread's objects without slot numbers: kind, name, state, parent's kind, peer, counters. */
export function shape(th: ThreadSnapshot) {
  const bySlot = new Map(th.objects.map((o) => [o.slot, o]));
  return th.objects.map((o) => ({ kind: o.kind, name: o.name, state: o.state, parent: bySlot.get(o.parent)?.kind ?? null, peer: o.peer, counters: o.counters }));
}
