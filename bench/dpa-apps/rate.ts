/** The DPA side of the DPA benchmark's rate and launch measurements (bench/dpa-peer.ts). */
import * as dev from '../../src/dpa/dev/index.js';

/**
 * Thread: takes every message that came, posts as many receives again and counts them on an event.
 * Its argument is a DPA pointer to: 0 consumer completion, 8 consumer, 16 count event (u64 each).
 */
export function sink(arg: bigint): void {
  const mem = dev.dpaMemory(arg, 24);
  const a = new DataView(mem.buffer, mem.byteOffset, 24);
  const cc = a.getBigUint64(0, true);
  let got = 0;
  while (dev.comchConsumerGetCompletion(cc) !== undefined) got++;
  if (got > 0) {
    dev.comchConsumerCompletionAck(cc, got);
    dev.comchConsumerAck(a.getBigUint64(8, true), got);
    dev.syncEventUpdateAdd(a.getBigUint64(16, true), BigInt(got));
  }
  dev.comchConsumerCompletionRequestNotification(cc);
}

/** RPC: the consumer's first receives. */
export function post(consumer: bigint, receives: bigint): void {
  dev.comchConsumerAck(consumer, receives);
}

/** Kernel: nothing (the launch-to-completion latency is all there is to measure). */
export function empty(): void {}
