/**
 * What every CPU-side DPA object (thread, completion, notification completion, async ops, consumer
 * completion) shares: its entry in its DPA's object table, its life (created -> started -> stopped ->
 * destroyed), and its DPA, which refuses to stop while such objects exist.
 */
import { DocaError } from '../core/error.js';
import type { Dpa, DpaRun } from './dpa.js';
import { KIND_NAMES } from './layout.js';
import { ObjState } from './objects.js';

let nextId = 1;

export abstract class DpaObject {
  protected readonly dpaRun: DpaRun;
  /** Its index in the DPA's object table (`doca_dpa_thread_get_id` for a thread). */
  readonly index: number;
  private destroyed = false;
  private started = false;
  readonly name: string;
  /** @internal Objects that refer to this one (a completion to its thread); it cannot be destroyed while any do. */
  readonly _users = new Set<DpaObject>();

  protected constructor(
    readonly dpa: Dpa,
    readonly kind: number,
    call: string,
  ) {
    this.dpaRun = dpa._running(call);
    this.index = this.dpaRun.objects.allocate(kind, call);
    this.name = `${KIND_NAMES[kind]} ${nextId++}`;
    dpa._adopt(this);
  }

  /**
   * Whether it is started, as its owner knows it: never read back from the object entry, whose state
   * word other threads could overwrite (and then it could never be stopped or destroyed).
   */
  get isStarted(): boolean {
    return !this.destroyed && this.started;
  }

  /** Starts or stops it: the owner's own record, then the entry's state word (STARTED or CREATED). */
  protected setStarted(on: boolean, state: number = on ? ObjState.STARTED : ObjState.CREATED): void {
    this.started = on;
    this.dpaRun.objects.setState(this.index, state);
  }

  /** The handle DPA code uses (`*_get_dpa_handle`): BAD_STATE unless started. */
  protected dpaHandle(call: string): bigint {
    this.alive(call);
    if (!this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is not started`);
    return this.dpaRun.objects.handle(this.kind, this.index);
  }

  /** Frees the entry (its handles are refused from then on). IN_USE while others refer to it. */
  protected destroyObject(call: string): void {
    if (this.destroyed) return;
    if (this._users.size > 0) throw new DocaError('IN_USE', call, `${this.name} is still used by ${[...this._users].map((u) => u.name).join(', ')}`);
    this.destroyed = true;
    this.dpaRun.objects.release(this.index);
    this.dpa._orphan(this);
  }

  protected alive(call: string): void {
    if (this.destroyed) throw new DocaError('BAD_STATE', call, `${this.name} was destroyed`);
  }

  /** Throws BAD_STATE unless stopped (or never started): configuration happens only then. */
  protected configurable(call: string): void {
    this.alive(call);
    if (this.isStarted) throw new DocaError('BAD_STATE', call, `${this.name} is started; configure it while it is stopped`);
  }

  /** Throws unless `other` belongs to the same DPA (INVALID_VALUE) and is alive. */
  protected sameDpa(other: DpaObject | undefined, what: string, call: string): void {
    if (!(other instanceof DpaObject)) throw new DocaError('INVALID_VALUE', call, `expected a ${what}`);
    if (other.dpa !== this.dpa) throw new DocaError('INVALID_VALUE', call, `${other.name} belongs to another DPA`);
    other.alive(call);
  }

  /** @internal its DPA entered its fatal state (a consumer stops taking messages; nothing else changes). */
  _dpaFailed(): void {}

  get isDestroyed(): boolean {
    return this.destroyed;
  }
}
