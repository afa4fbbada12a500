/**
 * The kinds of a stats segment's slots and events (fabric/stats.ts, docs/protocol.md#introspection),
 * apart from the writer: code that must load without the native addon (the fault plan, which the CLI's
 * `doctor` loads) names them from here.
 */

/** What a slot describes. */
export const StatKind = {
  DEVICE: 1,
  SERVER: 2,
  CLIENT: 3,
  CONNECTION: 4,
  CONSUMER: 5,
  PRODUCER: 6,
  SYNC_EVENT: 7,
  DPA: 8,
  DPA_THREAD: 9,
  MSGQ: 10,
  FAULT: 11,
} as const;
export type StatKind = (typeof StatKind)[keyof typeof StatKind];

/** Event kinds in the event ring. */
export const StatEvent = { CONNECT: 1, DISCONNECT: 2, CONSUMER_NEW: 3, CONSUMER_EXPIRED: 4, ERROR: 5, FAULT: 6, STATE: 7 } as const;

/**
 * Each kind's counters by index, named: a writer says `stat.c[Counter.SERVER.REFUSED]++`. Observers name
 * them in lower case (COUNTER_NAMES in stats.ts, made from this), so the two cannot drift.
 */
export const Counter = {
  DEVICE: {},
  SERVER: { CONNECTIONS: 0, ACCEPTED: 1, REFUSED: 2 },
  CLIENT: { CONNECTIONS: 0 },
  CONNECTION: { SENT_MESSAGES: 0, SENT_BYTES: 1, RECV_MESSAGES: 2, RECV_BYTES: 3 },
  CONSUMER: { POSTED: 0, RECEIVED: 1, RECEIVED_BYTES: 2, FAILED: 3 },
  PRODUCER: { SENT: 0, SENT_BYTES: 1, AGAIN: 2, FAILED: 3 },
  /** VALUE is a u64 (`stat.u`), the others f64. */
  SYNC_EVENT: { VALUE: 0, WAITERS: 1, UPDATES: 2 },
  DPA: { THREADS: 0, KERNELS: 1, RPCS: 2 },
  DPA_THREAD: { ACTIVATIONS: 0 },
  MSGQ: { CONSUMERS: 0, PRODUCERS: 1 },
  FAULT: { INJECTED: 0 },
} as const satisfies Record<keyof typeof StatKind, Record<string, number>>;
