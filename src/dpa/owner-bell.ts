/**
 * The doorbell of a DPA's owner (the CPU thread that started it): EUs ring it when an RPC call finishes,
 * when they come up or leave, and when a stopping DPA thread has stopped. The owner waits on it in two
 * ways: blocking, in bounded poll(2) slices (a blocking `doca_dpa_rpc`, start, stop), or from its event
 * loop through a watch that keeps the loop alive only while a promise waits on it (`rpcAsync`).
 *
 * The same arming rule as every doorbell (docs/wakeup.md): arm, look once more, then sleep.
 */
import { Bell, BellState, type BellRef } from '../fabric/doorbell.js';
import { native } from '../native/load.js';

const noop = () => {};

export class OwnerBell {
  private readonly bell = new Bell(32);
  private watchId = -1;
  private onWake: (() => void) | undefined;

  constructor() {
    this.bell.allocate('doca_dpa_start');
  }

  get ref(): BellRef {
    return this.bell.ref(0);
  }

  /**
   * Blocks until `done()` holds or `timeoutMs` passes (false then), sleeping on the bell in slices of at
   * most `sliceMs`, after each of which `onSlice` runs (the watchdog).
   */
  waitSync(done: () => boolean, timeoutMs: number, sliceMs: number, onSlice: () => void): boolean {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      if (done()) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      this.bell.arm();
      if (!done()) native.fdPoll(this.bell.readFd, Math.min(left, sliceMs));
      if (this.bell.disarm() === BellState.RUNG) this.bell.drain();
      this.bell.harvest(noop);
      onSlice();
    }
  }

  /**
   * Calls `onWake` from the event loop whenever the bell rings, while `watch(true)` holds; the watch
   * keeps the loop alive only then. `onWake` decides, and calls `watch` again to go on waiting.
   */
  watch(on: boolean, onWake?: () => void): void {
    if (onWake) this.onWake = onWake;
    if (on && this.watchId < 0) this.watchId = native.fdWatch(this.bell.readFd, this.wake);
    if (this.watchId >= 0) native.fdWatchRef(this.watchId, on);
    if (on) this.bell.arm();
  }

  private readonly wake = (): void => {
    this.bell.disarm();
    this.bell.harvest(noop);
    this.onWake?.();
  };

  close(): void {
    if (this.watchId >= 0) native.fdUnwatch(this.watchId);
    this.watchId = -1;
    this.bell.close();
  }
}
