/**
 * Indices 0 to capacity - 1 of a fixed table, handed out to its users: freed ones first (the last freed
 * first), then the lowest never used. One mechanism for the tables of slots in shared memory (a bell's
 * source bits, a thread's stats slots, a DPA's object entries).
 */
export class FreeList {
  private readonly freed: number[] = [];
  private next = 0;

  constructor(readonly capacity: number) {}

  /** A free index, or -1 when all `capacity` are taken. */
  take(): number {
    return this.freed.pop() ?? (this.next < this.capacity ? this.next++ : -1);
  }

  /** Index `i` is free again. */
  give(i: number): void {
    this.freed.push(i);
  }
}
