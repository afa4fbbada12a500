/**
 * A fast-path task's immediate data (`doca_comch_producer_task_send_{get,set}_imm_data`,
 * `doca_comch_consumer_task_post_recv_get_imm_data`): the task's own copy, in storage the task keeps for
 * its life (MAX_IMM bytes), so that setting or receiving it allocates nothing. `get()` hands out a view of
 * that storage, made again only when the length changes: like DOCA's pointer into the task, it shows the
 * next message's data once the task is reused.
 */
import { MAX_IMM } from './consumer-queue.js';

export class ImmData {
  /** The storage: the data is its first `length` bytes. */
  readonly bytes = new Uint8Array(MAX_IMM);
  /** Bytes held; -1 for none (DOCA: NULL, length 0). */
  private len = -1;
  private view: Uint8Array | undefined;

  /** The data (a view of the task's copy), or undefined when there is none. */
  get(): Uint8Array | undefined {
    if (this.len < 0) return undefined;
    if (this.view?.length !== this.len) this.view = this.bytes.subarray(0, this.len);
    return this.view;
  }

  get length(): number {
    return this.len < 0 ? 0 : this.len;
  }

  /** True when the task holds some (possibly empty) immediate data. */
  get present(): boolean {
    return this.len >= 0;
  }

  /** Copies `src` (at most MAX_IMM bytes: the caller checked), or holds none for undefined. */
  set(src: Uint8Array | undefined): void {
    if (src === undefined) {
      this.len = -1;
      return;
    }
    this.copyFrom(src, 0, src.length);
  }

  /** Copies `length` (at most MAX_IMM) bytes of `src` from `offset`; a byte loop, which beats a call at these sizes. */
  copyFrom(src: Uint8Array, offset: number, length: number): void {
    const b = this.bytes;
    for (let i = 0; i < length; i++) b[i] = src[offset + i]!;
    this.len = length;
  }

  clear(): void {
    this.len = -1;
  }
}
