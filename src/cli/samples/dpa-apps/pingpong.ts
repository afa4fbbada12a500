/**
 * The DPA side of `softdpu sample comch_msgq_dpa_pingpong`: one DPA thread, activated by its consumer
 * completion context, answers every message the CPU sends it with the same bytes and counts them on a
 * sync event the CPU waits for.
 *
 * Its argument is a DPA pointer to (u64 each): 0 consumer completion, 8 consumer, 16 producer,
 * 24 producer completion, 32 count event, 40 CPU consumer id, 48 poll (1: keep polling until `expected`
 * messages came, instead of rescheduling once none waits), 56 expected, 64 messages answered so far.
 */
import * as dev from 'softdpu/dpa-dev';

const ARGS = 72;
/** Messages answered before their receives are posted again (the CPU keeps at least as many). */
const BATCH = 4;

/** Thread: answers what came, acks it, posts as many receives again, and re-arms (or keeps polling). */
export function pong(arg: bigint): void {
  const mem = dev.dpaMemory(arg, ARGS);
  const a = new DataView(mem.buffer, mem.byteOffset, ARGS);
  const cc = a.getBigUint64(0, true);
  const consumer = a.getBigUint64(8, true);
  const producer = a.getBigUint64(16, true);
  const sent = a.getBigUint64(24, true);
  const cpuConsumer = Number(a.getBigUint64(40, true));
  const poll = a.getBigUint64(48, true) === 1n;
  const expected = a.getBigUint64(56, true);
  let answered = a.getBigUint64(64, true);
  for (;;) {
    // A bounded batch: its receives are posted again only after it, and the CPU may not run out meanwhile.
    let got = 0;
    for (let e = dev.comchConsumerGetCompletion(cc); e !== undefined; e = got < BATCH ? dev.comchConsumerGetCompletion(cc) : undefined) {
      dev.comchProducerPostSendImmOnly(producer, cpuConsumer, dev.comchConsumerGetCompletionImm(e), dev.SubmitFlag.FLUSH | dev.SubmitFlag.OPTIMIZE_REPORTS);
      got++;
    }
    if (got > 0) {
      dev.comchConsumerCompletionAck(cc, got);
      dev.comchConsumerAck(consumer, got);
      let done = 0;
      while (dev.getCompletion(sent) !== undefined) done++;
      if (done > 0) dev.completionAck(sent, done);
      answered += BigInt(got);
      a.setBigUint64(64, answered, true);
      dev.syncEventUpdateSet(a.getBigUint64(32, true), answered);
    } else if (!poll || answered >= expected) {
      break;
    }
  }
  dev.comchConsumerCompletionRequestNotification(cc);
  dev.threadReschedule();
}

/** RPC: posts the consumer's first receives (its credits for the CPU's producer). */
export function pong_init(consumer: bigint, receives: bigint): void {
  dev.comchConsumerAck(consumer, receives);
}
