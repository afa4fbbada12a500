/** A growable ring buffer: O(1) push and shift without the array copying `Array#shift` does. */
export class Fifo<T> {
  private items: (T | undefined)[] = new Array(16);
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) & (this.items.length - 1)] = item;
    this.count++;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.count--;
    return item;
  }

  peek(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const out: T[] = [];
    for (let item = this.shift(); item !== undefined; item = this.shift()) out.push(item);
    return out;
  }

  private grow(): void {
    const bigger = new Array<T | undefined>(this.items.length * 2);
    for (let i = 0; i < this.count; i++) bigger[i] = this.items[(this.head + i) & (this.items.length - 1)];
    this.items = bigger;
    this.head = 0;
  }
}
