/**
 * What producers and consumers share: they live on an established connection, possibly in another
 * thread than the connection's context (made from a `ComchConnectionRef`), and fail when it ends.
 */
import { Context, CtxState } from '../core/ctx.js';
import { DocaError } from '../core/error.js';
import { WakeSet } from '../fabric/wake-set.js';
import { ComchConnection } from './connection.js';
import { CONN_CONNECTED, FP, type Side } from './layout.js';
import { attach, type ComchConnectionRef, detach, type Registry } from './registry.js';

export abstract class ComchEndpoint extends Context {
  protected readonly registry: Registry;
  protected readonly side: Side;
  readonly ref: ComchConnectionRef;
  private readonly local: ComchConnection | undefined;
  protected readonly wakes: WakeSet;
  private released = false;
  private failing = false;

  protected constructor(name: string, target: ComchConnection | ComchConnectionRef, call: string) {
    super(name);
    if (target instanceof ComchConnection && !target.isConnected) {
      throw new DocaError('BAD_STATE', call, `connection ${target.id} is not established`);
    }
    this.ref = target instanceof ComchConnection ? target.share() : target;
    if (!this.ref?.segment || (this.ref.side !== 'server' && this.ref.side !== 'client')) {
      throw new DocaError('INVALID_VALUE', call, 'expected a ComchConnection or the reference its share() gives');
    }
    this.registry = attach(this.ref, call);
    if (!this.registry.connected) {
      detach(this.registry);
      throw new DocaError('BAD_STATE', call, `connection ${this.ref.id} is not established`);
    }
    this.side = this.ref.side;
    this.wakes = new WakeSet(() => this.pe?._signal());
    this.local = target instanceof ComchConnection ? target : undefined;
    this.local?._children.add(this);
  }

  /** False once the connection ended; a STARTING or RUNNING endpoint then fails (once). */
  protected connectionAlive(): boolean {
    if (this.registry.connected) return true;
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

  override _arm(notify: () => void): boolean {
    const work = super._arm(notify);
    this.wakes.add(this.registry.segment, FP.STATE, CONN_CONNECTED);
    const state = this.getState();
    return work || (!this.registry.connected && (state === CtxState.STARTING || state === CtxState.RUNNING));
  }

  override _disarm(): void {
    this.wakes.clear();
  }

  /** Lets go of the connection (destroy). */
  protected release(): void {
    if (this.released) return;
    this.released = true;
    this.local?._children.delete(this);
    detach(this.registry);
  }
}
