/**
 * Promise and async-iterator adapters over the producer and consumer callback core: the same tasks,
 * submitted with `submitAsync()`, never a second path.
 */
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { DocaBuf } from '../core/buf.js';
import { DocaError } from '../core/error.js';
import type { WaitOptions } from '../core/wait.js';
import type { ComchConsumer } from './consumer.js';
import type { ComchConsumerPostRecvTask } from './consumer-task.js';
import type { ComchProducer } from './producer.js';

/** How a send retries while the consumer has no posted buffer (AGAIN). Defaults: 16 at once, then 16 x 1 ms. */
export interface RetryPolicy {
  immediate?: number;
  delayed?: number;
  delayMs?: number;
}

export interface ProducerSendOptions extends WaitOptions {
  consumerId: number;
  immData?: Uint8Array;
  retry?: RetryPolicy;
}

/** `producer.send()`: allocate, submit (retrying AGAIN under the policy), await the completion, free. */
export async function producerSend(producer: ComchProducer, buf: DocaBuf, options: ProducerSendOptions): Promise<void> {
  const { immediate = 16, delayed = 16, delayMs = 1 } = options.retry ?? {};
  const task = producer.taskSendAllocInit(buf, options.immData, options.consumerId);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await task.submitAsync();
        return;
      } catch (err) {
        if (!DocaError.is(err, 'AGAIN')) throw err;
        if (attempt >= immediate + delayed) {
          throw new DocaError('AGAIN', 'ComchProducer.send', `consumer ${options.consumerId} had no posted buffer after ${attempt + 1} attempts`, { cause: err });
        }
        if (options.signal?.aborted) throw options.signal.reason;
        if (attempt < immediate) await yieldToLoop();
        else await sleep(delayMs, undefined, options.signal ? { signal: options.signal } : {});
      }
    }
  } finally {
    task.free();
  }
}

/** One completed receive, as `consumer.messages()` yields it. Valid until the next `next()`. */
export interface ComchReceived {
  /** The buffer; its data window is what arrived. It is posted again when you ask for the next message. */
  buf: DocaBuf;
  data: Uint8Array;
  immData: Uint8Array | undefined;
  producerId: number;
}

/**
 * `consumer.messages({ bufs })`: posts every buffer, yields each completed receive in the order posted,
 * and posts a buffer again when the next message is asked for. Breaking out stops the reposting; buffers
 * still posted complete (and their tasks are freed) when the consumer stops.
 */
export function consumerMessages(consumer: ComchConsumer, bufs: DocaBuf[], options: WaitOptions = {}): AsyncIterableIterator<ComchReceived> {
  const posted: { task: ComchConsumerPostRecvTask; done: Promise<ComchConsumerPostRecvTask> }[] = [];
  let previous: ComchConsumerPostRecvTask | undefined;
  let closed = false;
  const post = (task: ComchConsumerPostRecvTask) => {
    const done = task.submitAsync();
    done.catch(() => {}); // settled by next(), or freed on close
    posted.push({ task, done });
  };
  for (const buf of bufs) post(consumer.taskPostRecvAllocInit(buf));
  const close = () => {
    if (closed) return;
    closed = true;
    options.signal?.removeEventListener('abort', close);
    previous?.free();
    for (const { task, done } of posted.splice(0)) done.then(() => task.free(), () => task.free());
  };
  options.signal?.addEventListener('abort', close, { once: true });
  const it: AsyncIterableIterator<ComchReceived> = {
    async next() {
      if (options.signal?.aborted) {
        close();
        throw options.signal.reason;
      }
      if (closed) return { value: undefined, done: true };
      if (previous) {
        const task = previous;
        previous = undefined;
        post(task);
      }
      const head = posted.shift();
      if (!head) return { value: undefined, done: true };
      try {
        const task = await head.done;
        previous = task;
        const buf = task.getBuf();
        return { value: { buf, data: buf.getData(), immData: task.getImmData(), producerId: task.getProducerId() }, done: false };
      } catch (err) {
        head.task.free();
        close();
        if (options.signal?.aborted) throw options.signal.reason;
        if (DocaError.is(err, 'SHUTDOWN')) return { value: undefined, done: true };
        throw err;
      }
    },
    async return() {
      close();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it;
}
