/**
 * A fast-path task's immediate data (`doca_comch_producer_task_send_{get,set}_imm_data`,
 * `doca_comch_consumer_task_post_recv_get_imm_data`): the task's own copy, in storage the task keeps for
 * its life (MAX_IMM bytes), so that setting or receiving it allocates nothing. `get()` hands out a view of
 * that storage, made again only when the length changes: like DOCA's pointer into the task, it shows the
 * next message's data once the task is reused. A send copies that view into the slot with one set();
 * a receive copies the slot's bytes in 32-bit words (at most 8; a slot's immediate area is MAX_IMM
 * bytes, so the last word never reads past it).
 */
import { copyInto } from '../fabric/copy.js';
import { MAX_IMM } from './consumer-queue.js';

export class ImmData {
  /** The storage: the data is its first `length` bytes. */
  readonly bytes = new Uint8Array(MAX_IMM);
  private readonly words = new DataView(this.bytes.buffer);
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

  /** Copies `src` (at most MAX_IMM bytes: the caller checked), or holds none for undefined. */
  set(src: Uint8Array | undefined): void {
    if (src === undefined) {
      this.len = -1;
      return;
    }
    copyInto(this.bytes, src, 0);
    this.len = src.length;
  }

  /**
   * Copies `length` (at most MAX_IMM) bytes at `offset` of `src`, whose MAX_IMM bytes from `offset` are
   * all readable (a consumer queue slot's immediate area), in 32-bit words.
   */
  copyFrom(src: DataView, offset: number, length: number): void {
    const w = this.words;
    for (let i = 0; i < length; i += 4) w.setUint32(i, src.getUint32(offset + i, true), true);
    this.len = length;
  }

  clear(): void {
    this.len = -1;
  }
}
