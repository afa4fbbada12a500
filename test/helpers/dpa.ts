/** DPA tests: a fabric with a topology of chosen DPA capabilities, started DPAs cleaned up, leak counters. */
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Dev } from '../../src/core/dev.js';
import { DpaApp } from '../../src/dpa/app.js';
import { Dpa } from '../../src/dpa/dpa.js';
import { useFabric } from '../../src/fabric/fabric.js';
import { DEFAULT_TOPOLOGY_JSON, type DpaCaps } from '../../src/fabric/topology.js';
import { SyncEvent } from '../../src/sync-event/sync-event.js';
import { tempFabricDir } from './fabric.js';

/** A test DPA application (dist/test/fixtures/dpa-apps/<name>.js). */
export const appPath = (name: string): string => fileURLToPath(new URL(`../fixtures/dpa-apps/${name}.js`, import.meta.url));

/** A fresh fabric for this test, with the default topology's devices and `caps` for their DPAs. */
export function dpaFabric(t: TestContext, caps: Partial<DpaCaps> = {}): { dir: string; topology: string } {
  const dir = tempFabricDir(t);
  const topology = join(dir, 'topology.json');
  writeFileSync(topology, JSON.stringify({ ...DEFAULT_TOPOLOGY_JSON, caps: { dpa: caps } }));
  useFabric({ dir, topology });
  return { dir, topology };
}

const stacks = new WeakMap<TestContext, (() => unknown)[]>();

/**
 * Runs `fn` when the test ends, after the cleanups registered later (last in, first out): DPA objects
 * go before their DPA, whatever order the test made them in.
 */
export function onCleanup(t: TestContext, fn: () => unknown): void {
  let stack = stacks.get(t);
  if (!stack) {
    const fresh: (() => unknown)[] = [];
    stacks.set(t, (stack = fresh));
    t.after(async () => {
      for (const f of fresh.reverse()) await f();
    });
  }
  stack.push(fn);
}

/** A started DPA running test application `app`, destroyed (and its threads awaited) when the test ends. */
export function startDpa(t: TestContext, dev: Dev, app = 'basic'): Dpa {
  const dpa = Dpa.create(dev);
  dpa.setApp(DpaApp.create(appPath(app)));
  dpa.start();
  onCleanup(t, async () => {
    try {
      dpa.destroy();
    } catch (err) {
      t.diagnostic(`the DPA could not be destroyed: ${(err as Error).message}`);
      return;
    }
    await dpa.exited();
  });
  return dpa;
}

/** A started sync event whose `dpaRole` location is `dpa` and whose other location is the CPU of `dev`. */
export function dpaEvent(dev: Dev, dpa: Dpa, dpaRole: 'publisher' | 'subscriber'): SyncEvent {
  const e = SyncEvent.create();
  if (dpaRole === 'publisher') {
    e.addPublisherLocationDpa(dpa);
    e.addSubscriberLocationCpu(dev);
  } else {
    e.addPublisherLocationCpu(dev);
    e.addSubscriberLocationDpa(dpa);
  }
  e.start();
  return e;
}

/** Threads of this process (each EU is one). */
export const threadCount = (): number => readdirSync('/proc/self/task').length;

export { openFds } from './proc.js';

/** This process's open memfds of softdpu segments of `kind` (e.g. 'dpa', 'dpaheap', 'consumer'). */
export function memfds(kind: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(`/memfd:softdpu.${kind}.`)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

/** Waits (bounded) until `done()`, letting the event loop turn (helpers/wait.ts). */
export { until as eventually } from './wait.js';
