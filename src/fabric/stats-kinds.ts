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
