/**
 * What producers and consumers share: they live on an established connection, possibly in another
 * thread than the connection's context (made from a `ComchConnectionRef`), hold an entry of the
 * connection's endpoint table, and fail when the connection ends. Each is one source of its own engine:
 * its entry publishes the engine's bell, which producers ring when they fill a consumer, the contexts
 * ring when a consumer's announcement changes, and the connection's end rings for everyone.
 */
import { Context, CtxState, type WakeSource } from '../core/ctx.js';
import { DocaError } from '../core/error.js';
import { lookDue } from '../core/pe.js';
import { StatKind, statRecord } from '../fabric/stats.js';
import { ComchConnection } from './connection.js';
import type { Side } from './layout.js';
import { attach, type ComchConnectionRef, detach, type EndpointTable } from './endpoint-table.js';

/** Polls of a busy engine between two looks at the connection's state (pollAlive). */
const ALIVE_LOOK_POLLS = 64;

export abstract class ComchEndpoint extends Context implements WakeSource {
  protected readonly table: EndpointTable;
  protected readonly side: Side;
  readonly ref: ComchConnectionRef;
  /** Its entry in the connection's endpoint table, and its id there. */
  protected readonly entry: number;
  protected readonly endpointId: number;
  private readonly local: ComchConnection | undefined;
  private released = false;
  private failing = false;
  private published = false;
  private alivePolls = 0;
  /** @internal */
  _bit = -1;
  /** @internal */
  _ready = false;

  protected constructor(name: string, target: ComchConnection | ComchConnectionRef, kind: 'consumer' | 'producer', call: string) {
    super(name);
    if (target instanceof ComchConnection && !target.isConnected) {
      throw new DocaError('BAD_STATE', call, `connection ${target.id} is not established`);
    }
    this.ref = target instanceof ComchConnection ? target.share() : target;
    if (!this.ref?.segment || (this.ref.side !== 'server' && this.ref.side !== 'client')) {
      throw new DocaError('INVALID_VALUE', call, 'expected a ComchConnection or the reference its share() gives');
    }
    this.table = attach(this.ref, call);
    if (!this.table.connected) {
      detach(this.table);
      throw new DocaError('BAD_STATE', call, `connection ${this.ref.id} is not established`);
    }
    this.side = this.ref.side;
    try {
      const max = kind === 'consumer' ? this.ref.caps.maxConsumers : this.ref.caps.maxProducers;
      ({ index: this.entry, id: this.endpointId } = this.table.reserve(this.side, kind, max, call));
    } catch (err) {
      detach(this.table);
      throw err;
    }
    this.local = target instanceof ComchConnection ? target : undefined;
    this.local?._children.add(this);
    this.stat = statRecord(this.ref.fabric, kind === 'consumer' ? StatKind.CONSUMER : StatKind.PRODUCER, `${kind} ${this.endpointId} on ${this.side} connection ${this.ref.id}`, this.local?._stat, this.endpointId);
  }

  /** @internal looks at the connection (and, for a consumer, its queue). */
  abstract _pollSource(): boolean;

  /** Registers with the engine (once) and publishes its bell in the entry, so that peers can ring it. */
  protected publish(call: string): void {
    if (this.published) return;
    this.table.publishBell(this.entry, this.addSource(this, call));
    this.published = true;
  }

  /**
   * `connectionAlive()` for a poll, looked at as `lookDue` says (a busy loop polls every endpoint on every
   * call: the look was 4 % of a busy main <-> worker fast-path round trip).
   */
  protected pollAlive(): boolean {
    return !lookDue(this.pe, ++this.alivePolls, ALIVE_LOOK_POLLS) || this.connectionAlive();
  }

  /** False once the connection ended; a STARTING or RUNNING endpoint then fails (once). */
  protected connectionAlive(): boolean {
    if (this.table.connected) return true;
    const state = this.getState();
    if ((state === CtxState.STARTING || state === CtxState.RUNNING) && !this.failing) {
      this.failing = true;
      this.fail(new DocaError('CONNECTION_RESET', this.name, `connection ${this.ref.id} ended`));
    }
    return false;
  }

  protected override _doStop(): void {
    this.failing = false;
  }

  /** Lets go of the connection (destroy): frees the entry and the attachment. */
  protected release(): void {
    if (this.released) return;
    this.released = true;
    this.table.release(this.entry);
    this.local?._children.delete(this);
    detach(this.table);
  }
}
