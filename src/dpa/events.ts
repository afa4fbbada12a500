/**
 * Sync events as the DPA reaches them: the counter (a u64 in the event's value segment) and its waiter
 * table, opened in this thread from the descriptors the owner put in the event's object entry
 * (`doca_sync_event_get_dpa_handle`). Updates ring the event's waiters, in any process, exactly as a
 * CPU handle's do (sync-event/layout.ts). An event whose creator destroyed it is refused (BAD_STATE).
 */
import { DocaError } from '../core/error.js';
import { decodeDescriptor, Segment } from '../fabric/segment.js';
import { SE_LIVE, SE_STATE, Waiters } from '../sync-event/layout.js';
import { OBJ } from './layout.js';
import { SYNC_EVENT } from './objects.js';
import type { DpaTables } from './tables.js';

interface Opened {
  generation: number;
  control: Segment;
  value: Segment;
  values: BigUint64Array;
  index: number;
  waiters: Waiters;
}

export class DpaEvents {
  private readonly opened = new Map<number, Opened>();

  constructor(private readonly dpa: DpaTables) {}

  /** Event object `index`, mapped (once per generation); throws for one that cannot be used. */
  open(index: number, call: string): Opened {
    const generation = this.dpa.load(index, OBJ.GEN);
    let event = this.opened.get(index);
    if (event && event.generation !== generation) {
      this.forget(index, event);
      event = undefined;
    }
    if (!event) event = this.map(index, generation, call);
    if (Atomics.load(event.control.i32, SE_STATE / 4) !== SE_LIVE) throw new DocaError('BAD_STATE', call, 'the sync event was destroyed by its creator');
    return event;
  }

  get(index: number, call: string): bigint {
    const event = this.open(index, call);
    return Atomics.load(event.values, event.index);
  }

  set(index: number, value: bigint, call: string): void {
    const event = this.open(index, call);
    Atomics.store(event.values, event.index, value);
    event.waiters.ringIfWaiting();
  }

  add(index: number, value: bigint, call: string): bigint {
    const event = this.open(index, call);
    const before = Atomics.add(event.values, event.index, value);
    event.waiters.ringIfWaiting();
    return before;
  }

  /** Unmaps everything (the EU leaves). */
  close(): void {
    for (const [index, event] of this.opened) this.forget(index, event);
  }

  private map(index: number, generation: number, call: string): Opened {
    const base = this.dpa.layout.object(index);
    const v = this.dpa.view;
    const control = Segment.open(decodeDescriptor(v, base + SYNC_EVENT.CONTROL, call), call, ['syncevent']);
    let value: Segment = control;
    try {
      const vd = decodeDescriptor(v, base + SYNC_EVENT.VALUE, call);
      if (vd.pid !== control.descriptor.pid || vd.fd !== control.descriptor.fd) value = Segment.open(vd, call, ['mem']);
      const offset = v.getFloat64(base + SYNC_EVENT.VALUE_OFFSET, true);
      if (!Number.isInteger(offset) || offset % 8 !== 0 || offset < 64 || offset + 8 > value.size) {
        throw new DocaError('INVALID_VALUE', call, `the event's counter offset ${offset} does not fit its ${value.size}-byte segment`);
      }
      const event: Opened = { generation, control, value, values: new BigUint64Array(value.u8.buffer), index: offset / 8, waiters: new Waiters(control) };
      this.opened.set(index, event);
      return event;
    } catch (err) {
      if (value !== control) value.close();
      control.close();
      throw err;
    }
  }

  private forget(index: number, event: Opened): void {
    this.opened.delete(index);
    event.waiters.close();
    if (event.value !== event.control) event.value.close();
    event.control.close();
  }
}
