/**
 * A context with one doorbell source: a 32-bit word in a shared segment. A ringer bumps the word and
 * rings the context's bell (fabric/doorbell.ts); the context reports each new value it sees. The smallest
 * thing that sleeps and wakes the way connections, consumers and sync events do.
 */
import { Context, type WakeSource } from '../../src/core/ctx.js';
import { type BellRef, openRemoteBell, releaseRemoteBell } from '../../src/fabric/doorbell.js';
import type { Segment } from '../../src/fabric/segment.js';

export class SourceCtx extends Context implements WakeSource {
  _bit = -1;
  _ready = false;
  seen = 0;
  ref: BellRef | undefined;
  readonly values: number[] = [];

  constructor(
    readonly segment: Segment,
    readonly word: number,
  ) {
    super('source ctx');
  }

  destroy(): void {
    this.destroyContext('source_destroy');
  }

  _pollSource(): boolean {
    const v = Atomics.load(this.segment.i32, this.word / 4);
    if (v !== this.seen) {
      this.seen = v;
      this.queueEvent(() => this.values.push(v));
    }
    return false;
  }

  protected _doStart(): boolean {
    this.ref ??= this.addSource(this, 'source_start');
    return true;
  }
}

/** What another thread or process does to wake a SourceCtx: bump the word, then ring. */
export function ringer(segment: Segment, word: number, ref: BellRef): { bump(): void; close(): void } {
  const bell = openRemoteBell(ref, 'test ringer');
  return {
    bump() {
      Atomics.add(segment.i32, word / 4, 1);
      bell.ring(ref.bit);
    },
    close: () => releaseRemoteBell(bell),
  };
}
