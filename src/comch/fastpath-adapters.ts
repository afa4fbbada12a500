/**
 * Promise and async-iterator adapters over the producer and consumer callback core: the same tasks,
 * submitted with `submitAsync()`, never a second path; the iterator is the one every stream uses
 * (`core/pull.ts`), so `timeoutMs`, `signal` and `break` behave as they do everywhere.
 */
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { DocaBuf } from '../core/buf.js';
import { DocaError } from '../core/error.js';
import { PullIterator } from '../core/pull.js';
import { boundedWait, type WaitOptions } from '../core/wait.js';
import type { ComchConsumer } from './consumer.js';
import type { ComchConsumerPostRecvTask } from './post-recv-task.js';
import type { ComchProducer } from './producer.js';
import type { ComchProducerSendTask } from './producer-task.js';

/** How a send retries while the consumer has no posted buffer (AGAIN). Defaults: 16 at once, then 16 x 1 ms. */
export interface RetryPolicy {
  /** Retries at once, each after one turn of the event loop (default 16). */
  immediate?: number;
  /** Retries after those, each `delayMs` later (default 16). */
  delayed?: number;
  /** Milliseconds between the delayed retries (default 1). */
  delayMs?: number;
}

/** What `ComchProducer.send()` sends to whom, how it retries, and how long it may take in all. */
export interface ProducerSendOptions extends WaitOptions {
  /** The consumer to fill (`doca_comch_consumer_get_id` on the other side; the new-consumer event gives it). */
  consumerId: number;
  /** Immediate data carried with the buffer (`doca_comch_producer_task_send_alloc_init`'s `imm_data`). */
  immData?: Uint8Array;
  /** How to retry while the consumer has no posted buffer (AGAIN). */
  retry?: RetryPolicy;
}

/**
 * `producer.send()`: allocate, submit (retrying AGAIN under the policy), await the completion, free. The
 * whole send is bounded by `timeoutMs` (TIME_OUT) and `signal`; a send still in flight then is freed when
 * it completes.
 */
export async function producerSend(producer: ComchProducer, buf: DocaBuf, options: ProducerSendOptions): Promise<void> {
  const { immediate = 16, delayed = 16, delayMs = 1 } = options.retry ?? {};
  const call = 'ComchProducer.send';
  const started = performance.now();
  const left = () => (options.timeoutMs === undefined ? undefined : Math.max(0, options.timeoutMs - (performance.now() - started)));
  const timedOut = () => new DocaError('TIME_OUT', call, `the send to consumer ${options.consumerId} did not complete within ${options.timeoutMs} ms`);
  const task = producer.taskSendAllocInit(buf, options.immData, options.consumerId);
  let owned = true; // false while a submission is in flight that a timeout gave up on
  try {
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) throw options.signal.reason;
      const completion = task.submitAsync();
      try {
        await boundedWait<ComchProducerSendTask>({ signal: options.signal, timeoutMs: left() }, timedOut, (resolve, reject) => {
          completion.then(resolve, reject);
          return () => {};
        });
        return;
      } catch (err) {
        if (task.inFlight) {
          owned = false;
          completion.then(() => task.free(), () => task.free());
          throw err;
        }
        if (!DocaError.is(err, 'AGAIN')) throw err;
        if (attempt >= immediate + delayed) {
          throw new DocaError('AGAIN', call, `consumer ${options.consumerId} had no posted buffer after ${attempt + 1} attempts`, { cause: err });
        }
        if (left() === 0) throw timedOut();
        if (attempt < immediate) await yieldToLoop();
        else await sleep(Math.min(delayMs, left() ?? delayMs), undefined, options.signal ? { signal: options.signal } : {});
      }
    }
  } finally {
    if (owned) task.free();
  }
}

/** One completed receive, as `consumer.messages()` yields it. Valid until the next `next()`. */
export interface ComchReceived {
  /** The buffer; its data window is what arrived. It is posted again when you ask for the next message. */
  buf: DocaBuf;
  /** `buf.getData()`: a view of what arrived, valid until the next message is asked for. */
  data: Uint8Array;
  /** The immediate data, if the producer sent any: a copy, yours to keep (the task's own is reused). */
  immData: Uint8Array | undefined;
  /** The sending producer's id (`doca_comch_consumer_task_post_recv_get_producer_id`). */
  producerId: number;
}

/**
 * `consumer.messages(bufs)`: posts every buffer, yields each completed receive in the order posted, and
 * posts a buffer again when the next message is asked for. `timeoutMs` bounds each wait (TIME_OUT),
 * `signal` ends it; breaking out stops the reposting, and buffers still posted are freed as they
 * complete (when the consumer stops, at the latest). When the consumer stops, what producers had already
 * filled is still yielded (nothing is reposted), then the iteration ends.
 */
export function consumerMessages(consumer: ComchConsumer, bufs: DocaBuf[], options: WaitOptions = {}): AsyncIterableIterator<ComchReceived> {
  const posted: { task: ComchConsumerPostRecvTask; done: Promise<ComchConsumerPostRecvTask> }[] = [];
  let previous: ComchConsumerPostRecvTask | undefined;
  let closed = false;
  const post = (task: ComchConsumerPostRecvTask) => {
    const done = task.submitAsync();
    done.catch(() => {}); // settled by the iterator, or freed on close
    posted.push({ task, done });
  };
  for (const buf of bufs) post(consumer.taskPostRecvAllocInit(buf));
  const it: PullIterator<ComchReceived> = new PullIterator<ComchReceived>(
    () => {
      closed = true;
      previous?.free();
      previous = undefined;
      for (const { task, done } of posted.splice(0)) done.then(() => task.free(), () => task.free());
    },
    () => {
      if (previous) {
        const task = previous;
        previous = undefined;
        // A stopping consumer still completes what producers filled; it takes no new receives.
        if (consumer.state === 'RUNNING') post(task);
        else task.free();
      }
      const head = posted.shift();
      if (!head) return it.end();
      head.done.then(
        (task) => {
          if (closed) return task.free();
          previous = task;
          const buf = task.getBuf();
          it.deliver({ buf, data: buf.getData(), immData: task.getImmData()?.slice(), producerId: task.getProducerId() });
        },
        (err: unknown) => {
          head.task.free();
          if (DocaError.is(err, 'SHUTDOWN')) it.end();
          else it.fail(err);
        },
      );
    },
    options,
    'ComchConsumer.messages',
  );
  return it;
}
