/**
 * Unix sockets in the fabric directory. They carry only what shared memory cannot: handshakes,
 * doorbells for a peer that sleeps, and end-of-file when a peer dies. Nothing listens on the network.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { DocaError } from '../core/error.js';
import type { Fabric } from './fabric.js';

/** Listens on `<fabric>/<kind>.<pid>-<start>.<tag>.sock`; closing the server removes the file. */
export function listenFabricSocket(fabric: Fabric, kind: string, tag: string, onConnection: (socket: Socket) => void): Promise<Server> {
  const path = fabric.socketPath(kind, tag);
  return new Promise((resolve, reject) => {
    const server = createServer({ pauseOnConnect: false }, onConnection);
    server.once('error', (err) => reject(new DocaError('OPERATING_SYSTEM', 'fabric listen', `cannot listen on ${path}: ${err.message}`, { cause: err })));
    server.listen({ path, exclusive: true }, () => resolve(server));
  });
}
