/**
 * Buffers (doca_buf.h, doca_buf_inventory.h). A `DocaBuf` describes a region [head, head + len) of a
 * memory map with a data window [data, data + dataLen) inside it. Where DOCA takes an address and a
 * length, softdpu takes a Uint8Array view of the map's memory (its offset is the address, its length the
 * length). Reference counts are u16; at zero the buffer returns to its inventory and the object may no
 * longer be used (a fresh object comes out of the next get, so a stale one always fails clearly).
 */
import { DocaError } from './error.js';
import type { Mmap } from './mmap.js';

const MAX_REFCOUNT = 0xffff;

/** Offset of `view` inside `range`, or -1 if it does not lie entirely inside. */
function offsetIn(range: Uint8Array, view: Uint8Array): number {
  if (!(view instanceof Uint8Array) || view.buffer !== range.buffer) return -1;
  const off = view.byteOffset - range.byteOffset;
  return off >= 0 && off + view.length <= range.length ? off : -1;
}

/**
 * A buffer inventory, `struct doca_buf_inventory` (`doca_buf_inventory_create`): a pool of buffer
 * descriptors over memory maps.
 *
 * @example
 * ```ts
 * // doca_buf_inventory_create(16, &inv); doca_buf_inventory_start(inv); doca_buf_inventory_buf_get_by_data(inv, mmap, addr, len, &buf)
 * const inv = BufInventory.create(16);
 * inv.start();
 * const buf = inv.bufGetByData(mmap, mmap.getMemrange().subarray(0, 64));
 * buf.decRefcount(); // back to the inventory
 * ```
 */
export class BufInventory {
  private capacity: number;
  private out = 0;
  private started = false;
  private destroyed = false;
  /** `doca_buf_inventory_set_user_data` / `get_user_data`. */
  userData: unknown;

  private constructor(numElements: number) {
    this.capacity = numElements;
  }

  /** `doca_buf_inventory_create`. */
  static create(numElements: number): BufInventory {
    if (!Number.isInteger(numElements) || numElements < 1 || numElements > 2 ** 24) {
      throw new DocaError('INVALID_VALUE', 'doca_buf_inventory_create', `num_elements ${numElements} is not an integer in [1, 2^24]`);
    }
    return new BufInventory(numElements);
  }

  /** `doca_buf_inventory_start`. */
  start(): void {
    this.alive('doca_buf_inventory_start');
    this.started = true;
  }

  /** `doca_buf_inventory_stop`: refused (IN_USE) while buffers are out. */
  stop(): void {
    this.alive('doca_buf_inventory_stop');
    if (this.out > 0) throw new DocaError('IN_USE', 'doca_buf_inventory_stop', `${this.out} buffer(s) are still out`);
    this.started = false;
  }

  /** `doca_buf_inventory_destroy`: implicitly stops; IN_USE while buffers are out. */
  destroy(): void {
    if (this.destroyed) return;
    if (this.out > 0) throw new DocaError('IN_USE', 'doca_buf_inventory_destroy', `${this.out} buffer(s) are still out; release them (decRefcount) first`);
    this.destroyed = true;
    this.started = false;
  }

  /** `doca_buf_inventory_get_num_elements`. */
  getNumElements(): number {
    return this.capacity;
  }

  /** `doca_buf_inventory_get_num_free_elements`. */
  getNumFreeElements(): number {
    return this.capacity - this.out;
  }

  /** `doca_buf_inventory_expand`: adds `n` elements. */
  expand(n: number): void {
    this.alive('doca_buf_inventory_expand');
    if (!Number.isInteger(n) || n < 1) throw new DocaError('INVALID_VALUE', 'doca_buf_inventory_expand', `${n} is not a positive integer`);
    this.capacity += n;
  }

  /** `doca_buf_inventory_buf_get_by_addr`: head = data = `region`, data length 0 (an empty buffer to fill). */
  bufGetByAddr(mmap: Mmap, region: Uint8Array): DocaBuf {
    return this.get('doca_buf_inventory_buf_get_by_addr', mmap, region, region, 0);
  }

  /** `doca_buf_inventory_buf_get_by_data`: head = data = `data`, data length = its length (a full buffer). */
  bufGetByData(mmap: Mmap, data: Uint8Array): DocaBuf {
    return this.get('doca_buf_inventory_buf_get_by_data', mmap, data, data, data?.length);
  }

  /** `doca_buf_inventory_buf_get_by_args`: the data window must lie inside the head region. */
  bufGetByArgs(mmap: Mmap, head: Uint8Array, data: Uint8Array): DocaBuf {
    return this.get('doca_buf_inventory_buf_get_by_args', mmap, head, data, data?.length);
  }

  /** `doca_buf_inventory_buf_dup`: a new buffer with the same map, region and data window. */
  bufDup(src: DocaBuf): DocaBuf {
    const call = 'doca_buf_inventory_buf_dup';
    src._check(call);
    return this.take(call, src.getMmap(), src._headOffset, src.getLen(), src._dataOffset, src.getDataLen());
  }

  private get(call: string, mmap: Mmap, head: Uint8Array, data: Uint8Array, dataLen: number): DocaBuf {
    const range = mmap._checkUsable(call);
    const headOff = offsetIn(range, head);
    if (headOff < 0) throw new DocaError('INVALID_VALUE', call, `the region is not inside the memory range of ${mmap.name} (${range.length} bytes)`);
    const dataOff = offsetIn(range, data);
    if (dataOff < 0) throw new DocaError('INVALID_VALUE', call, `the data is not inside the memory range of ${mmap.name} (${range.length} bytes)`);
    if (dataOff < headOff || dataOff + dataLen > headOff + head.length) {
      throw new DocaError('INVALID_VALUE', call, `the data window [${dataOff}, ${dataOff + dataLen}) is not inside the head region [${headOff}, ${headOff + head.length})`);
    }
    return this.take(call, mmap, headOff, head.length, dataOff, dataLen);
  }

  private take(call: string, mmap: Mmap, headOff: number, len: number, dataOff: number, dataLen: number): DocaBuf {
    this.alive(call);
    if (!this.started) throw new DocaError('BAD_STATE', call, 'the inventory is not started');
    if (this.out >= this.capacity) throw new DocaError('NO_MEMORY', call, `all ${this.capacity} elements of the inventory are in use`);
    this.out++;
    mmap._bufCount(1);
    return new DocaBuf(this, mmap, headOff, len, dataOff, dataLen);
  }

  /** @internal */
  _returned(mmap: Mmap): void {
    this.out--;
    mmap._bufCount(-1);
  }

  private alive(call: string): void {
    if (this.destroyed) throw new DocaError('BAD_STATE', call, 'the inventory was destroyed');
  }
}

/**
 * A buffer, `struct doca_buf`: a region of a memory map (its head) with a data window inside it. Where
 * DOCA gives addresses, the getters give `Uint8Array` views of the map's memory.
 *
 * @example
 * ```ts
 * // doca_buf_inventory_buf_get_by_addr(inv, mmap, addr, len, &buf); doca_buf_set_data(buf, addr, 5)
 * const buf = inv.bufGetByAddr(mmap, mmap.getMemrange().subarray(0, 256)); // empty: data length 0
 * buf.getHead().set(new TextEncoder().encode('hello'));
 * buf.setDataLen(5);
 * console.log(buf.getData()); // the 5 bytes
 * ```
 */
export class DocaBuf {
  private refs = 1;
  /** The data view, kept until the window or the memory changes (a producer sends the same buf often). */
  private view: Uint8Array | undefined;
  /**
   * The map's range the view was cut from: compared by identity, since `.buffer` is a call into V8's
   * runtime (two of them per send and per receive were ~3 % of a 64 B fast-path stream's time, both sides).
   */
  private viewRange: Uint8Array | undefined;

  /** @internal use a BufInventory. */
  constructor(
    private readonly inventory: BufInventory,
    private readonly mmap: Mmap,
    /** @internal offset of the head in the map's memory range */
    readonly _headOffset: number,
    private readonly len: number,
    /** @internal offset of the data window in the map's memory range */
    public _dataOffset: number,
    private dataLen: number,
  ) {}

  /** `doca_buf_get_head`: a view of the whole region. */
  getHead(): Uint8Array {
    const range = this.range('doca_buf_get_head');
    return range.subarray(this._headOffset, this._headOffset + this.len);
  }

  /** `doca_buf_get_len`. */
  getLen(): number {
    this._check('doca_buf_get_len');
    return this.len;
  }

  /** `doca_buf_get_data`: a view of the data window. */
  getData(): Uint8Array {
    const range = this.range('doca_buf_get_data');
    const view = this.view;
    if (view !== undefined && this.viewRange === range && view.length === this.dataLen) return view;
    this.viewRange = range;
    return (this.view = range.subarray(this._dataOffset, this._dataOffset + this.dataLen));
  }

  /** `doca_buf_get_data_len`. */
  getDataLen(): number {
    this._check('doca_buf_get_data_len');
    return this.dataLen;
  }

  /** `doca_buf_set_data`: moves the data window; it must stay inside the head region (INVALID_VALUE). */
  setData(data: Uint8Array, dataLen = data?.length): void {
    const call = 'doca_buf_set_data';
    const range = this.range(call);
    const off = offsetIn(range, data);
    if (off < 0) throw new DocaError('INVALID_VALUE', call, 'the data is not a view of the buffer\'s memory range');
    if (off < this._headOffset || !Number.isInteger(dataLen) || dataLen < 0 || off + dataLen > this._headOffset + this.len) {
      throw new DocaError('INVALID_VALUE', call, `the data window [${off}, ${off + dataLen}) is not inside the head region [${this._headOffset}, ${this._headOffset + this.len})`);
    }
    this._dataOffset = off;
    this.dataLen = dataLen;
    this.view = undefined;
  }

  /** `doca_buf_set_data_len`: keeps the data start. */
  setDataLen(dataLen: number): void {
    const call = 'doca_buf_set_data_len';
    this._check(call);
    if (!Number.isInteger(dataLen) || dataLen < 0 || this._dataOffset + dataLen > this._headOffset + this.len) {
      throw new DocaError('INVALID_VALUE', call, `data length ${dataLen} from offset ${this._dataOffset - this._headOffset} exceeds the ${this.len}-byte region`);
    }
    this.dataLen = dataLen;
    this.view = undefined;
  }

  /** `doca_buf_reset_data_len`: data length 0. */
  resetDataLen(): void {
    this._check('doca_buf_reset_data_len');
    this.dataLen = 0;
    this.view = undefined;
  }

  /** `doca_buf_get_refcount`. */
  getRefcount(): number {
    return this.refs;
  }

  /** `doca_buf_inc_refcount`: returns the count before; TOO_BIG at 65535. */
  incRefcount(): number {
    const call = 'doca_buf_inc_refcount';
    this._check(call);
    if (this.refs >= MAX_REFCOUNT) throw new DocaError('TOO_BIG', call, `the reference count is already ${MAX_REFCOUNT}`);
    return this.refs++;
  }

  /** `doca_buf_dec_refcount`: returns the count before; at zero the buffer returns to its inventory. */
  decRefcount(): number {
    const call = 'doca_buf_dec_refcount';
    if (this.refs === 0) throw new DocaError('BAD_STATE', call, 'the reference count is already 0 (the buffer was released)');
    const before = this.refs--;
    if (this.refs === 0) this.inventory._returned(this.mmap);
    return before;
  }

  /** The map the buffer belongs to. */
  getMmap(): Mmap {
    return this.mmap;
  }

  /** `doca_buf_get_list_len`: lists are not supported (cap max_buf_list_len is 1), so always 1. */
  getListLen(): number {
    return 1;
  }

  /** @internal */
  _check(call: string): void {
    if (this.refs === 0) throw new DocaError('BAD_STATE', call, 'the buffer was released (reference count 0)');
  }

  /** @internal data length set by a completion (e.g. a consumer's received message). */
  _setReceived(dataLen: number): void {
    // The same window as the last receive keeps its view: a re-posted buffer gets the same sizes.
    if (this._dataOffset === this._headOffset && this.dataLen === dataLen) return;
    this._dataOffset = this._headOffset;
    this.dataLen = dataLen;
    this.view = undefined;
  }

  private range(call: string): Uint8Array {
    this._check(call);
    return this.mmap._checkUsable(call);
  }
}
