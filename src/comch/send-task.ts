/** The comch send task (`doca_comch_task_send`): one control-path message on one connection. */
import type { TaskConf } from '../core/task.js';
import { Task } from '../core/task.js';
import type { ComchConnection } from './connection.js';
import type { ComchCtx } from './comch-ctx.js';

/**
 * The comch send task, `struct doca_comch_task_send` (`doca_comch_server_task_send_alloc_init`,
 * `doca_comch_client_task_send_alloc_init`): one control-path message on one connection. It completes
 * once the message is in the peer's receive queue.
 *
 * @example
 * ```ts
 * // doca_comch_server_task_send_alloc_init(server, conn, msg, len, &task); doca_task_submit(doca_comch_task_send_as_task(task))
 * server.taskSendSetConf((task) => task.free(), (task) => { console.error(task.error); task.free(); }, 32);
 * // ... once RUNNING, in the connection callback or later:
 * server.taskSendAllocInit(connection, new TextEncoder().encode('hello')).submit();
 * ```
 */
export class ComchSendTask extends Task {
  private conn!: ComchConnection;
  private message!: Uint8Array;

  /** @internal use `server.taskSendAllocInit` / `client.taskSendAllocInit` (the pool makes and recycles these). */
  constructor(ctx: ComchCtx, conf: TaskConf) {
    super(ctx, conf);
  }

  /** @internal what an allocation sets (a recycled object gets every field anew). */
  _init(connection: ComchConnection, message: Uint8Array): void {
    this.conn = connection;
    this.message = message;
  }

  /** The connection the message goes to (the one given to `*_task_send_alloc_init`). */
  get connection(): ComchConnection {
    return this.conn;
  }

  /** `doca_comch_task_send_as_task`: the task itself (TypeScript needs no upcast). */
  asTask(): Task {
    return this;
  }

  /** The message (not copied until it is written into the peer's queue: do not change it after submit). */
  getMessage(): Uint8Array {
    return this.message;
  }

  /**
   * Replaces the message before a resubmission (softdpu addition: DOCA 3.0 has no setter, so reusing a
   * task from its completion callback needs one). Same size rules as `taskSendAllocInit`.
   */
  setMessage(message: Uint8Array): void {
    this.check('ComchSendTask.setMessage');
    (this.getCtx() as ComchCtx)._checkMessage('ComchSendTask.setMessage', this.connection, message);
    this.message = message;
  }

  _execute(): void {
    this.conn._send(this);
  }
}
