/**
 * The DPA side of dpa-msgq.mjs (a DPA application: its exports run on the DPA's execution units). One
 * thread, activated by its consumer completion context, posts a receive again for every message that
 * came, then sends its immediate data back to the CPU. It loads the device API of the
 * checkout being measured, as the CPU side loads its public entry.
 * Argument: a DPA pointer to 0 consumer completion, 8 consumer, 16 producer, 24 producer completion,
 * 32 CPU consumer id (u64 each).
 */
import { pathToFileURL } from 'node:url';

const dev = await import(pathToFileURL(`${process.env.SOFTDPU_CHECKOUT}/dist/src/dpa/dev/index.js`).href);

export function pong(arg) {
  const a = new DataView(dev.dpaMemory(arg, 40).slice().buffer);
  const [cc, consumer, producer, sent, cpuConsumer] = [0, 8, 16, 24, 32].map((o) => a.getBigUint64(o, true));
  const imms = [];
  for (let e = dev.comchConsumerGetCompletion(cc); e !== undefined; e = dev.comchConsumerGetCompletion(cc)) imms.push(dev.comchConsumerGetCompletionImm(e));
  if (imms.length > 0) {
    // Receives are posted again before the answers go: the CPU, once answered, may send at once.
    dev.comchConsumerCompletionAck(cc, imms.length);
    dev.comchConsumerAck(consumer, imms.length);
    for (const imm of imms) dev.comchProducerPostSendImmOnly(producer, Number(cpuConsumer), imm, dev.SubmitFlag.FLUSH);
  }
  let done = 0;
  while (dev.getCompletion(sent) !== undefined) done++;
  if (done > 0) dev.completionAck(sent, done);
  dev.comchConsumerCompletionRequestNotification(cc);
  dev.threadReschedule();
}

/** RPC: posts the consumer's first receives (the CPU producer's credits). */
export function pong_init(consumer, receives) {
  dev.comchConsumerAck(consumer, receives);
}
