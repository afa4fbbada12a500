/**
 * A comch connection (`struct doca_comch_connection`): one client and one server, joined by a shared
 * segment with a receive ring per direction and a Unix socket for doorbells and end-of-file.
 *
 * Sending writes the message into the peer's receive ring and completes the task (DOCA: delivered to the
 * remote side); a full ring holds tasks back in order (flow control), never drops them. Receiving copies
 * each message out of the ring (the copy is the caller's to keep) and frees the slot. Each side publishes
 * its context's bell reference in the segment, and the other side rings it after every batch it writes
 * (fabric/doorbell.ts: no syscall unless that context's engine sleeps), and after freeing room if this
 * side said it holds sends back. The connection is one source of its context: a wake-up looks at it
 * only when it rang.
 *
 * Ending: a DISCONNECT record in the ring (after every earlier message), the socket's end-of-file, a
 * corrupt record, or the peer found dead by the liveness cadence. The remaining messages are delivered,
 * the connection's held-back sends fail through their error callback, and the owner is told once.
 */
import type { Socket } from 'node:net';
import { type Context, CtxState, type WakeSource } from '../core/ctx.js';
import { DocaError } from '../core/error.js';
import { Fifo } from '../core/fifo.js';
import { sdkLogSource } from '../core/log.js';
import { lookDue } from '../core/pe.js';
import { PullIterator } from '../core/pull.js';
import type { WaitOptions } from '../core/wait.js';
import { type BellRef, PeerBell, publishBellRef, unpublishBellRef } from '../fabric/doorbell.js';
import { type ProcessIdentity, selfThread, watchProcess } from '../fabric/liveness.js';
import { RingReader, RingWriter } from '../fabric/ring.js';
import { StatKind, type StatRecord, statRecord } from '../fabric/stats.js';
import type { Segment } from '../fabric/segment.js';
import type { ComchCtx } from './comch-ctx.js';
import type { ComchClient } from './client.js';
import { type ConnLayout, CONSUMER, CONTROL, CONTROL_PAYLOAD, FP, otherSide, SIDE, type Side } from './layout.js';
import { type ComchConnectionRef, EndpointTable } from './endpoint-table.js';
import type { ComchServer } from './server.js';
import type { ComchSendTask } from './send-task.js';

const log = sdkLogSource('comch');

/** `enum doca_comch_counter`. */
export const ComchCounter = { SENT_MESSAGES: 1, SENT_BYTES: 2, RECV_MESSAGES: 3, RECV_BYTES: 4 } as const;
export type ComchCounter = (typeof ComchCounter)[keyof typeof ComchCounter];

/** Record types in the rings. */
export const RecordType = { MSG: 1, DISCONNECT: 2 } as const;

const EMPTY = new Uint8Array(0);
/** Messages one look at the connection takes before letting other sources have a turn. */
const RECV_BUDGET = 32;
/**
 * How often a look at the connection relays consumer announcements while its engine never slept (a busy
 * loop looks every fraction of a microsecond): once in this many looks, a power of two. The relay reads
 * two words (the request bell and the peer's control queue tail), two builtin calls per look that a
 * busy fast-path loop paid on every message while nothing was announced. An engine that has slept looks
 * when rung, so it relays on every look.
 */
const RELAY_LOOK_POLLS = 64;

type State = 'connected' | 'disconnecting' | 'closing' | 'closed';

/** How long a side that left (or disconnected a client) waits for the peer to close its socket. */
export const LINGER_MS = 2000;

let lastId = 0;

/**
 * A comch connection, `struct doca_comch_connection`: one client and one server, made by the handshake
 * and handed to the server's connection callback (`doca_comch_server_event_connection_status_changed_register`)
 * or by `doca_comch_client_get_connection`. Sends are ordered and never dropped (a full receive ring holds
 * them back); each message received is a copy the receiver keeps. Producers and consumers of the fast
 * path are made on it (`doca_comch_producer_create(connection, ...)`).
 *
 * @example
 * ```ts
 * // doca_comch_client_get_connection(client, &conn); doca_comch_client_task_send_alloc_init(client, conn, msg, len, &task)
 * const connection = client.getConnection();
 * await connection.send(new TextEncoder().encode('ping')); // alloc, submit, await, free
 * for await (const reply of connection.messages({ timeoutMs: 5_000 })) {
 *   console.log(new TextDecoder().decode(reply));
 *   break;
 * }
 * ```
 */
export class ComchConnection implements WakeSource {
  /** `doca_comch_connection_set_user_data` / `get_user_data`. */
  userData: unknown;
  /** Process-unique id, for messages. */
  readonly id = ++lastId;
  private state: State = 'connected';
  private readonly writer: RingWriter;
  private readonly reader: RingReader;
  private readonly pending = new Fifo<ComchSendTask>();
  /** Its introspection record: the live counters are its counters (ComchCounter - 1). */
  private readonly stat: StatRecord;
  private readonly snapshot = [0, 0, 0, 0, 0];
  private iterator: PullIterator<Uint8Array> | undefined;
  private closeReason: DocaError | undefined;
  /** @internal */
  _bit = -1;
  /** @internal */
  _ready = false;
  private readonly wantsRoom: number;
  private readonly peerWantsRoom: number;
  /** The i32 index of this side's request bell (FP.REQUEST_BELL), read on every look. */
  private readonly requestBell: number;
  private readonly peerSide: Side;
  private unwatchPeer: () => void = () => {};
  /** @internal The fast-path table (consumer table) this side's context relays for. */
  readonly table: EndpointTable;
  /** The peer's context, rung when this side wrote a record or made room (docs/wakeup.md). */
  private readonly peerBell: PeerBell;
  private readonly controlOut: RingWriter;
  private readonly controlIn: RingReader;
  private lastRequest = -1;
  /** Looks at the connection so far (relay counts them in a busy loop). */
  private looks = 0;
  private readonly announced = new Set<number>();
  private readonly ownerWatches = new Map<number, { key: string; unwatch: () => void }>();
  private readonly record = new Uint8Array(CONTROL_PAYLOAD);
  /** Ends a connection this side left once the peer had LINGER_MS to close its end. */
  private lingerTimer: NodeJS.Timeout | undefined;
  private readonly recordView = new DataView(this.record.buffer);
  private readonly segmentView: DataView;
  /** @internal Producers and consumers made from this object in this thread (the teardown helper stops them). */
  readonly _children = new Set<Context>();

  /** @internal made by the server or client once the handshake is done. */
  constructor(
    private readonly owner: ComchCtx,
    /** @internal Which end of the connection this object is. */
    readonly side: Side,
    private readonly socket: Socket,
    private readonly segment: Segment,
    /** @internal Where the rings and tables are in the connection's segment. */
    readonly layout: ConnLayout,
    /** @internal The process at the other end. */
    readonly peer: ProcessIdentity,
  ) {
    const out = side === 'server' ? { base: layout.s2cBase, slots: layout.s2cSlots } : { base: layout.c2sBase, slots: layout.c2sSlots };
    const inc = side === 'server' ? { base: layout.c2sBase, slots: layout.c2sSlots } : { base: layout.s2cBase, slots: layout.s2cSlots };
    this.writer = new RingWriter(segment, out.base, out.slots, layout.msgSize);
    this.reader = new RingReader(segment, inc.base, inc.slots, layout.msgSize);
    const [ctlOut, ctlIn] = side === 'server' ? [layout.s2cControlBase, layout.c2sControlBase] : [layout.c2sControlBase, layout.s2cControlBase];
    this.controlOut = new RingWriter(segment, ctlOut, layout.entries * 2, CONTROL_PAYLOAD);
    this.controlIn = new RingReader(segment, ctlIn, layout.entries * 2, CONTROL_PAYLOAD);
    this.table = new EndpointTable(segment, layout);
    this.segmentView = new DataView(segment.u8.buffer);
    this.peerBell = PeerBell.at(segment, SIDE.BELL(otherSide(side)), 'comch connection');
    this.stat = statRecord(owner.devinfo.fabric.dir, StatKind.CONNECTION, `${side} connection ${this.id}`, owner._stat, this.id);
    this.stat.setPeer(peer.pid);
    this.peerSide = otherSide(side);
    this.wantsRoom = SIDE.WANTS_ROOM(side) / 4;
    this.peerWantsRoom = SIDE.WANTS_ROOM(this.peerSide) / 4;
    this.requestBell = FP.REQUEST_BELL[side] / 4;
    // After the handshake the socket carries nothing: its end-of-file is what it is there for.
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => this.peerGone(new DocaError('CONNECTION_RESET', 'comch connection', `the peer (pid ${peer.pid}) closed the connection`)));
  }

  /** `doca_comch_connection_set_user_data`. */
  setUserData(value: unknown): void {
    this.userData = value;
  }

  /** `doca_comch_connection_get_user_data`. */
  getUserData(): unknown {
    return this.userData;
  }

  /** `doca_comch_server_get_server_ctx`: the owning server, or undefined for a client's connection. */
  getServerCtx(): ComchServer | undefined {
    return this.side === 'server' ? (this.owner as unknown as ComchServer) : undefined;
  }

  /** `doca_comch_client_get_client_ctx`: the owning client, or undefined for a server's connection. */
  getClientCtx(): ComchClient | undefined {
    return this.side === 'client' ? (this.owner as unknown as ComchClient) : undefined;
  }

  /** True until the connection starts to end. */
  get isConnected(): boolean {
    return this.state === 'connected';
  }

  /**
   * What a worker thread needs to create producers and consumers on this connection: post it to the
   * worker and pass it to `ComchProducer.create` / `ComchConsumer.create` there.
   */
  share(): ComchConnectionRef {
    return this.owner._shareConnection(this, this.segment.descriptor);
  }

  /** Producers and consumers that exist on this side (created and not destroyed, in any thread). */
  get childCount(): number {
    return this.table.consumers(this.side) + this.table.producers(this.side);
  }

  /** Largest message this connection carries: the smaller of the two sides' `max_msg_size`. */
  get maxMsgSize(): number {
    return this.layout.msgSize;
  }

  /** `doca_comch_connection_update_info`: snapshots the counters. CONNECTION_ABORTED once it ended. */
  updateInfo(): void {
    if (this.state !== 'connected' && this.state !== 'disconnecting') {
      throw new DocaError('CONNECTION_ABORTED', 'doca_comch_connection_update_info', `connection ${this.id} is disconnected`);
    }
    for (let i = 1; i <= 4; i++) this.snapshot[i] = this.stat.c[i - 1]!;
  }

  /** `doca_comch_connection_get_counter`: as of the last `updateInfo()`. */
  getCounter(counter: ComchCounter): number {
    if (!(counter >= 1 && counter <= 4 && Number.isInteger(counter))) {
      throw new DocaError('INVALID_VALUE', 'doca_comch_connection_get_counter', `${String(counter)} is not a doca_comch_counter`);
    }
    return this.snapshot[counter]!;
  }

  /**
   * Promise adapter: allocates a send task from the owner's pool, submits it, resolves when the message
   * is in the peer's receive queue (rejects with the task's error), and frees the task.
   */
  async send(message: Uint8Array): Promise<void> {
    const task = this.owner.taskSendAllocInit(this, message);
    try {
      await task.submitAsync();
    } finally {
      task.free();
    }
  }

  /**
   * The messages of this connection as an async iterator (each a copy). Only without a registered
   * receive callback, one iterator at a time; messages are taken from the ring only while the iterator
   * waits, so `break` loses nothing. Needs the owner's engine to be progressed (e.g. `pe.run()`).
   */
  messages(options: WaitOptions = {}): AsyncIterableIterator<Uint8Array> {
    this.owner._checkIterable('ComchConnection.messages');
    if (this.iterator) throw new DocaError('BAD_STATE', 'ComchConnection.messages', `connection ${this.id} already has an iterator`);
    const it = new PullIterator<Uint8Array>(
      () => {
        if (this.iterator === it) this.iterator = undefined;
      },
      () => this.owner._sourceReady(this),
      options,
    );
    if (this.state === 'closed') it.end();
    else this.iterator = it;
    return it;
  }

  // ---- for the owner ------------------------------------------------------------------------------

  /** @internal a send task was submitted on this connection. */
  _send(task: ComchSendTask): void {
    if (this.state !== 'connected') throw new DocaError('NOT_CONNECTED', 'doca_task_submit', `connection ${this.id} is ${this.state}`);
    if (this.pending.length === 0 && this.write(task)) {
      this.ringPeer();
      return;
    }
    this.pending.push(task);
    if (this.pending.length === 1) {
      // Say we wait for room, then look again: the peer either sees the flag or freed the room before.
      Atomics.store(this.segment.i32, this.wantsRoom, 1);
      if (this.writer.hasRoom()) this.owner._sourceReady(this);
    }
  }

  /** @internal the owner registered the connection as a source: publish where the peer rings us. */
  _publish(ref: BellRef): void {
    publishBellRef(this.segment, SIDE.BELL(this.side), ref);
    this.unwatchPeer = watchProcess(this.peer, () => this.peerGone(new DocaError('CONNECTION_RESET', 'comch connection', `the peer process ${this.peer.pid} died`)));
  }

  /**
   * @internal one look: moves held-back sends into the ring, takes messages for whoever listens, relays
   * consumer announcements, and finishes an ending connection. True when it stopped early (budget).
   */
  _pollSource(): boolean {
    let sent = 0;
    while (this.pending.length > 0 && this.write(this.pending.peek()!)) {
      this.pending.shift();
      sent++;
    }
    if (sent > 0) {
      if (this.pending.length === 0) Atomics.store(this.segment.i32, this.wantsRoom, 0);
      this.ringPeer();
    }
    const received = this.receive();
    if (received > 0 && Atomics.load(this.segment.i32, this.peerWantsRoom) !== 0) this.ringPeer();
    if (lookDue(this.owner.pe, ++this.looks, RELAY_LOOK_POLLS)) this.relay();
    if (this.state === 'closing') this.finishWhenRead();
    // A full control queue of the peer leaves announcements to make: look again (rare).
    return received >= RECV_BUDGET || this.lastRequest === -1;
  }

  /** @internal the server's `doca_comch_server_disconnect`: queues a DISCONNECT behind every earlier send. */
  _disconnect(call: string): void {
    if (this.state !== 'connected') throw new DocaError('NOT_CONNECTED', call, `connection ${this.id} is already ${this.state}`);
    while (this.pending.length > 0 && this.write(this.pending.peek()!)) this.pending.shift();
    if (this.pending.length > 0 || !this.writer.push(RecordType.DISCONNECT, EMPTY)) {
      this.ringPeer(); // the held-back sends it could write
      throw new DocaError('AGAIN', call, `the receive queue of connection ${this.id} is full; progress and call again`);
    }
    this.state = 'disconnecting';
    this.ringPeer();
  }

  /**
   * @internal this side leaves (client stop, server stop): tell the peer, drop held-back sends. It is
   * done when the peer closes its socket, or after LINGER_MS at the most (a peer that is blocked or
   * stopped progressing would otherwise hold this side's stop for ever): the same for both sides.
   */
  _leave(reason: DocaError): void {
    if (this.state === 'closed') return;
    if (this.state === 'closing') {
      // The peer already left; unread messages held it open. Look again: this side no longer reads.
      this.owner._sourceReady(this);
      return;
    }
    this.pending.drain();
    if (this.state === 'connected') this.writer.push(RecordType.DISCONNECT, EMPTY);
    this.ringPeer();
    this.closeReason = reason;
    this.state = 'closing';
    this.socket.end();
    this.lingerTimer = setTimeout(() => this._abort(), LINGER_MS);
    this.lingerTimer.unref();
  }

  /** @internal its introspection record (endpoints made from it hang below it). */
  get _stat(): StatRecord {
    return this.stat;
  }

  /** @internal the context this side belongs to (checked on every send without a scan). */
  get _ownerCtx(): ComchCtx {
    return this.owner;
  }

  /** @internal the iterator waiting on this connection, if any. */
  get _iterator(): PullIterator<Uint8Array> | undefined {
    return this.iterator;
  }

  /** @internal ends the connection at once (the owner stopped and the peer did not answer in time). */
  _abort(): void {
    this.socket.destroy();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private write(task: ComchSendTask): boolean {
    const message = task.getMessage();
    if (!this.writer.push(RecordType.MSG, message)) {
      if (this.writer.corrupt) this.corrupted('its receive queue index');
      return false;
    }
    this.stat.c[ComchCounter.SENT_MESSAGES - 1]!++;
    this.stat.c[ComchCounter.SENT_BYTES - 1]! += message.length;
    this.owner._sendDone(task);
    return true;
  }

  private receive(): number {
    let n = 0;
    while (n < RECV_BUDGET) {
      const rec = this.reader.peek();
      if (!rec) break;
      if (rec.length < 0 || (rec.type !== RecordType.MSG && rec.type !== RecordType.DISCONNECT)) {
        this.corrupted(`a record (type ${rec.type}, length ${rec.length < 0 ? 'or index out of range' : rec.length})`);
        break;
      }
      if (rec.type === RecordType.DISCONNECT) {
        this.reader.advance();
        this.peerGone(new DocaError('NOT_CONNECTED', 'comch connection', `the peer (pid ${this.peer.pid}) disconnected`));
        n++;
        break;
      }
      if (!this.owner._listening(this)) {
        this.owner._park(this); // looked at again when someone asks for a message
        break;
      }
      const bytes = this.reader.copy(rec);
      this.reader.advance();
      this.stat.c[ComchCounter.RECV_MESSAGES - 1]!++;
      this.stat.c[ComchCounter.RECV_BYTES - 1]! += bytes.length;
      this.owner._received(this, bytes);
      n++;
    }
    this.reader.release();
    return n;
  }

  /**
   * Publishes what this side wrote into its two rings and tells the peer's context to look at the
   * connection (no syscall unless its engine sleeps): every push is followed by this.
   */
  private ringPeer(): void {
    this.writer.publish();
    this.controlOut.publish();
    this.peerBell.ring();
  }

  /** The peer wrote something no valid connection holds: the connection ends with CONNECTION_ABORTED. */
  private corrupted(what: string): void {
    log.err(`connection ${this.id}: the peer (pid ${this.peer.pid}) corrupted ${what}; dropping the connection`);
    this.reader.abandon();
    this.peerGone(new DocaError('CONNECTION_ABORTED', 'comch connection', `the peer (pid ${this.peer.pid}) corrupted ${what}`));
  }

  private peerGone(reason: DocaError): void {
    if (this.state === 'closed') return;
    if (this.state !== 'closing') {
      this.closeReason = reason;
      this.state = 'closing';
    }
    this.owner._sourceReady(this);
  }

  /**
   * Relays this side's consumer announcements to the peer (the request bell says the table changed)
   * and the peer's to this side's context (new and expired consumer events). It runs on every look of an
   * engine that has slept, one in RELAY_LOOK_POLLS of a busy loop's, and mostly finds neither: both tests
   * are here, so that a look with nothing to relay calls neither step.
   */
  private relay(): number {
    const request = Atomics.load(this.segment.i32, this.requestBell);
    const announced = request === this.lastRequest ? 0 : this.announceConsumers(request);
    return this.controlIn.hasRecord() ? announced + this.takeAnnouncements() : announced;
  }

  /**
   * This side's endpoints asked (their request counter moved to `request`): announces its consumers that
   * started to the peer (CONSUMER_NEW), and those that stopped (CONSUMER_EXPIRED), through the control
   * queue. Returns how many it announced.
   */
  private announceConsumers(request: number): number {
    this.lastRequest = request;
    const table = this.table;
    table.reap(this.side);
    this.watchOwners();
    let n = 0;
    for (let i = 0; i < this.layout.entries; i++) {
      const state = table.state(i);
      if ((state !== CONSUMER.REQUESTED && state !== CONSUMER.EXPIRING) || table.side(i) !== this.side || !table.isConsumer(i)) continue;
      const announce = state === CONSUMER.REQUESTED;
      if (!announce && !this.announced.has(i)) {
        if (table.casState(i, CONSUMER.EXPIRING, CONSUMER.EXPIRED)) table.ringEndpoint(i); // it never reached the peer
        continue;
      }
      // A new consumer is ANNOUNCED before its record is pushed: a peer that reads the record at once
      // moves it on to REGISTERED, which it could not do from REQUESTED. A consumer stopping meanwhile
      // (REQUESTED -> EXPIRING in its thread) is looked at again in the next pass.
      if (announce && !table.casState(i, CONSUMER.REQUESTED, CONSUMER.ANNOUNCED)) {
        this.lastRequest = -1;
        continue;
      }
      this.recordView.setUint32(0, i, true);
      if (!this.controlOut.push(announce ? CONTROL.CONSUMER_NEW : CONTROL.CONSUMER_EXPIRED, this.record)) {
        if (this.controlOut.corrupt) this.corrupted('its control queue index');
        // The peer's control queue is full: look again next time (a new consumer, unheard of, goes back
        // to REQUESTED; if it began to stop meanwhile, it expires unannounced in the next pass).
        if (announce) table.casState(i, CONSUMER.ANNOUNCED, CONSUMER.REQUESTED);
        this.lastRequest = -1;
        break;
      }
      if (announce) {
        this.announced.add(i);
      } else {
        this.announced.delete(i);
        // The peer heard of its expiry: its stop may finish now.
        if (!table.casState(i, CONSUMER.EXPIRING, CONSUMER.EXPIRED)) this.lastRequest = -1;
        else table.ringEndpoint(i);
      }
      n++;
    }
    if (n > 0) this.ringPeer();
    return n;
  }

  /** Takes the peer's announcements of its consumers (new, expired) and raises their events here. */
  private takeAnnouncements(): number {
    let n = 0;
    for (let rec = this.controlIn.peek(); rec && this.state !== 'closing'; rec = this.controlIn.peek()) {
      if (rec.length !== CONTROL_PAYLOAD || (rec.type !== CONTROL.CONSUMER_NEW && rec.type !== CONTROL.CONSUMER_EXPIRED)) {
        this.corrupted(`a control record (type ${rec.type}, length ${rec.length})`);
        break;
      }
      const index = this.segmentView.getUint32(rec.offset, true);
      this.controlIn.advance();
      n++;
      if (index >= this.layout.entries || this.table.side(index) === this.side || !this.table.isConsumer(index)) {
        log.err(`connection ${this.id}: the peer (pid ${this.peer.pid}) announced consumer entry ${index}, which is not one of its consumers; ignoring it`);
        continue;
      }
      const id = this.table.id(index);
      if (rec.type === CONTROL.CONSUMER_NEW) {
        if (this.table.casState(index, CONSUMER.ANNOUNCED, CONSUMER.REGISTERED)) this.table.ringEndpoint(index); // its start completes now
        this.owner._consumerEvent(this, id, false);
      } else {
        this.owner._consumerEvent(this, id, true);
      }
    }
    this.controlIn.release();
    return n;
  }

  /**
   * Watches the threads that own this side's endpoints (other than this one): one that ends without
   * destroying them is reaped (its consumers expire at the peer, its entries are freed).
   */
  private watchOwners(): void {
    const r = this.table;
    for (let i = 0; i < this.layout.entries; i++) {
      const state = r.state(i);
      const watch = this.ownerWatches.get(i);
      const owner = state === CONSUMER.FREE || state === CONSUMER.RESERVING || r.side(i) !== this.side ? undefined : r.owner(i);
      const key = owner && `${owner.pid}:${owner.tid}:${owner.tstart}`;
      if (watch?.key === key) continue;
      watch?.unwatch();
      this.ownerWatches.delete(i);
      if (!owner || (owner.pid === selfThread.pid && owner.tid === selfThread.tid)) continue;
      const onDeath = () => {
        Atomics.add(this.segment.i32, this.requestBell, 1);
        this.owner._sourceReady(this);
      };
      this.ownerWatches.set(i, { key: key!, unwatch: watchProcess(owner, onDeath) });
    }
  }

  /**
   * An ending connection keeps the messages the peer sent before it left until they are read, as a
   * socket keeps its data before EOF: with iterators they wait for the next `next()`. Only this side's
   * context stopping drops them, and says how many.
   */
  private finishWhenRead(): void {
    if (this.reader.hasRecord() && this.owner.getState() === CtxState.RUNNING) return;
    let unread = 0;
    // At most one ring's worth: a peer still writing cannot keep this loop going.
    for (let n = 0, rec = this.reader.peek(); rec && rec.length >= 0 && n < this.reader.slots; n++, rec = this.reader.peek()) {
      if (rec.type === RecordType.MSG) unread++;
      this.reader.advance();
    }
    this.reader.release();
    if (unread > 0) log.warn(`connection ${this.id}: ${unread} message(s) from the peer (pid ${this.peer.pid}) were not read before this side stopped; dropping them`);
    this.finish();
  }

  private finish(): void {
    for (const w of this.ownerWatches.values()) w.unwatch();
    this.ownerWatches.clear();
    this.state = 'closed';
    clearTimeout(this.lingerTimer);
    this.stat.release();
    const reason = this.closeReason ?? new DocaError('NOT_CONNECTED', 'comch connection', `connection ${this.id} ended`);
    this.socket.destroy();
    this.unwatchPeer();
    unpublishBellRef(this.segment, SIDE.BELL(this.side));
    this.table.close();
    this.table.releaseBells();
    this.peerBell.release();
    this.segment.close();
    this.iterator?.end();
    this.iterator = undefined;
    this.owner._closed(this, reason, this.pending.drain());
  }
}
