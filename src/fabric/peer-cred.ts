/**
 * Who is at the other end of a fabric socket, as the kernel says (SO_PEERCRED), not as the peer claims:
 * the comch handshake checks the pid its HELLO or WELCOME names against it, and the user (a fabric is
 * one user's). docs/protocol.md#handshake.
 */
import type { Socket } from 'node:net';
import { DocaError } from '../core/error.js';
import { native } from '../native/load.js';

export interface PeerCred {
  pid: number;
  uid: number;
}

/** The credentials of the process at the other end of `socket` (connected), or NOT_CONNECTED if it has none. */
export function peerCred(socket: Socket, call: string): PeerCred {
  // A connected net.Socket over a Unix socket is a libuv pipe; Node exposes its descriptor on the handle.
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new DocaError('NOT_CONNECTED', call, 'the socket has no descriptor to ask who is at its other end');
  const [pid, uid] = native.peerCred(fd);
  return { pid, uid };
}

/** Why `claimed` (a HELLO's or WELCOME's pid) is not the process at the other end of `socket`, or undefined. */
export function impostor(socket: Socket, claimed: number, call: string): string | undefined {
  let cred: PeerCred;
  try {
    cred = peerCred(socket, call);
  } catch (err) {
    return (err as Error).message;
  }
  const uid = process.getuid?.();
  if (cred.pid !== claimed) return `its socket belongs to pid ${cred.pid}, not to the pid ${claimed} it claims`;
  if (uid !== undefined && cred.uid !== uid) return `its socket belongs to uid ${cred.uid}, not to this user (${uid})`;
  return undefined;
}
