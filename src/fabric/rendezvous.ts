/**
 * How processes find each other in a fabric without a daemon. A service claims its name with an
 * abstract Unix socket (the kernel releases it the moment the process dies, so a dead owner never
 * blocks a name) and listens on a socket file in the private fabric directory, named with its pid and
 * the name's digest; a client lists the directory for that digest and connects to a live owner.
 *
 * The abstract socket is only a lock: nothing is read from it, so another user who squats the name can
 * deny it, but never reach a service (the fabric directory is 0700).
 */
import { closeSync, existsSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { DocaError, osError } from '../core/error.js';
import type { Fabric } from './fabric.js';
import { isAlive } from './liveness.js';
import { entryOwner } from './names.js';

/** Listens on `path` synchronously: throws unless bound and listening when it returns. */
function listenNow(path: string, call: string, onConnection?: (socket: Socket) => void): Server {
  const server = createServer(onConnection);
  server.on('error', () => {}); // the failure is reported synchronously below
  server.listen({ path, exclusive: true });
  if (!server.listening) {
    server.close();
    throw listenFailure(path, call);
  }
  return server;
}

/**
 * Why a listen failed. Node reports the errno only in a later 'error' event, so the cause is found
 * again synchronously: an abstract name (a lock) fails only when it is taken; a socket file, when the
 * path exists (taken), or when its directory refuses a new entry, whose errno (EROFS, EACCES, ENOSPC...)
 * a probe file there reproduces.
 */
function listenFailure(path: string, call: string): DocaError {
  if (path.startsWith('\0')) return new DocaError('ALREADY_EXIST', call, 'the name is taken');
  if (existsSync(path)) return new DocaError('ALREADY_EXIST', call, `${path} is taken`);
  const probe = join(dirname(path), `.listen-probe.${process.pid}.${Math.random().toString(36).slice(2)}`);
  try {
    closeSync(openSync(probe, 'wx', 0o600));
    unlinkSync(probe);
  } catch (err) {
    return osError(err, call, `cannot listen on ${path}`);
  }
  return new DocaError('OPERATING_SYSTEM', call, `cannot listen on ${path} (its directory takes new files; the socket itself was refused)`);
}

/** Claims `key` for this process (released by `close()` on the returned lock, or by process death). */
export function claimName(fabric: Fabric, kind: string, key: string, call: string): Server {
  const lock = `\0softdpu.${Buffer.from(fabric.id).toString('hex')}.${kind}.${key}`;
  const server = listenNow(lock, call);
  server.unref();
  return server;
}

/** Listens on this process's socket file for `kind` and `key` in the fabric directory. */
export function listenService(fabric: Fabric, kind: string, key: string, call: string, onConnection: (socket: Socket) => void): Server {
  return listenNow(fabric.socketPath(kind, key), call, onConnection);
}

/** Socket paths of live processes serving `kind` and `key`, oldest owner first. */
export function findService(fabric: Fabric, kind: string, key: string): string[] {
  let names: string[];
  try {
    names = readdirSync(fabric.dir);
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, owner: entryOwner(name) }))
    .filter(({ name, owner }) => owner && owner.kind === kind && owner.tag === key && name.endsWith('.sock') && isAlive(owner))
    .sort((a, b) => a.owner!.start - b.owner!.start)
    .map(({ name }) => join(fabric.dir, name));
}

const NAP = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `fn` holding the fabric-wide lock `name` (an abstract socket, so the kernel frees it if its
 * holder dies). Waits synchronously, in 2 ms naps, up to `timeoutMs` for another holder to let go, then
 * TIME_OUT. For short critical sections (a file's read, change and rename).
 */
export function withNameLock<T>(name: string, call: string, timeoutMs: number, fn: () => T): T {
  const path = `\0softdpu.lock.${name}`;
  const deadline = performance.now() + timeoutMs;
  let lock: Server;
  for (;;) {
    try {
      lock = listenNow(path, call);
      break;
    } catch (err) {
      if (!DocaError.is(err, 'ALREADY_EXIST')) throw err;
      if (performance.now() > deadline) throw new DocaError('TIME_OUT', call, `the lock ${name} stayed taken for ${timeoutMs} ms`);
      Atomics.wait(NAP, 0, 0, 2);
    }
  }
  try {
    return fn();
  } finally {
    lock.close();
  }
}
