/**
 * Export blobs (`doca_mmap_export_pci`, `doca_sync_event_export_to_remote_*`): what one process hands
 * another, by any channel, to reach an object. Everything in a blob is checked before it is trusted:
 * size, magic, version, kind, a CRC32 over the rest (corruption) and the fabric it was made in. Forged
 * contents are caught later, by the segment header and token checks. Blobs are secrets: never log one.
 *
 * Envelope (little-endian; docs/protocol.md#export-blobs):
 *   0 u32 magic 'SDPB'   4 u16 version   6 u16 kind   8 u32 total length   12 u32 crc32 of [16, length)
 *  16 u8[8] fabric id   24 payload
 */
import { crc32 } from 'node:zlib';
import { DocaError } from './error.js';
import { active as faultsActive, faultBlob } from '../fabric/faults/index.js';
import { decodeDescriptor, DESCRIPTOR_SIZE, encodeDescriptor, type SegmentDescriptor } from '../fabric/segment.js';

const MAGIC = 0x42504453;
const VERSION = 1;
export const BLOB_HEADER_SIZE = 24;

/** What a blob describes. */
export const BlobKind = { MMAP_PCI: 1, SYNC_EVENT_PCI: 2, SYNC_EVENT_NET: 3 } as const;
export type BlobKind = (typeof BlobKind)[keyof typeof BlobKind];
const KIND_NAMES: Record<number, string> = { 1: 'mmap PCI export', 2: 'sync event PCI export', 3: 'sync event remote-net export' };

/** Builds a blob: write the payload with offsets relative to its start, then `finish()`. */
export class BlobWriter {
  private readonly bytes: Uint8Array;
  readonly view: DataView;

  /** `fabricId` undefined: a blob for another machine (remote net), bound to no fabric. */
  constructor(kind: BlobKind, payloadSize: number, fabricId: Uint8Array | undefined) {
    this.bytes = new Uint8Array(BLOB_HEADER_SIZE + payloadSize);
    const v = new DataView(this.bytes.buffer);
    v.setUint32(0, MAGIC, true);
    v.setUint16(4, VERSION, true);
    v.setUint16(6, kind, true);
    v.setUint32(8, this.bytes.length, true);
    if (fabricId) this.bytes.set(fabricId.subarray(0, 8), 16);
    this.view = new DataView(this.bytes.buffer, BLOB_HEADER_SIZE);
  }

  descriptor(offset: number, d: SegmentDescriptor): void {
    encodeDescriptor(d, this.view, offset);
  }

  text(offset: number, size: number, value: string): void {
    const encoded = new TextEncoder().encode(value);
    if (encoded.length > size) throw new RangeError(`${JSON.stringify(value)} does not fit in ${size} bytes`);
    this.bytes.set(encoded, BLOB_HEADER_SIZE + offset);
  }

  raw(offset: number, value: Uint8Array): void {
    this.bytes.set(value, BLOB_HEADER_SIZE + offset);
  }

  /** Seals the blob. An injected fault damages it here, on its way out, after the checksum (docs/faults.md). */
  finish(): Uint8Array {
    new DataView(this.bytes.buffer).setUint32(12, crc32(this.bytes.subarray(16)), true);
    return faultsActive ? faultBlob(this.bytes) : this.bytes;
  }
}

/** Checks a blob's envelope (INVALID_VALUE naming what is wrong) and reads its payload. */
export class BlobReader {
  readonly view: DataView;

  constructor(
    blob: unknown,
    kind: BlobKind,
    fabricId: Uint8Array | undefined,
    private readonly call: string,
    payloadSize: number,
  ) {
    if (!(blob instanceof Uint8Array)) throw new DocaError('INVALID_VALUE', call, 'the export blob must be a Uint8Array');
    if (blob.length < BLOB_HEADER_SIZE) throw new DocaError('INVALID_VALUE', call, `the export blob is truncated (${blob.length} bytes)`);
    const v = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    if (v.getUint32(0, true) !== MAGIC) throw new DocaError('INVALID_VALUE', call, 'the data is not a softdpu export blob');
    if (v.getUint16(4, true) !== VERSION) throw new DocaError('INVALID_VALUE', call, `the export blob has version ${v.getUint16(4, true)}, not ${VERSION}`);
    const declared = v.getUint32(8, true);
    if (declared !== blob.length) throw new DocaError('INVALID_VALUE', call, `the export blob is truncated or padded (${blob.length} bytes, its header says ${declared})`);
    if (v.getUint32(12, true) !== crc32(blob.subarray(16))) throw new DocaError('INVALID_VALUE', call, 'the export blob is corrupted (checksum mismatch)');
    const got = v.getUint16(6, true);
    if (got !== kind) throw new DocaError('INVALID_VALUE', call, `the blob is a ${KIND_NAMES[got] ?? `kind ${got}`} blob, not a ${KIND_NAMES[kind]} blob`);
    if (blob.length !== BLOB_HEADER_SIZE + payloadSize) throw new DocaError('INVALID_VALUE', call, `the ${KIND_NAMES[kind]} blob has ${blob.length} bytes, not ${BLOB_HEADER_SIZE + payloadSize}`);
    if (fabricId && !blob.subarray(16, 24).every((b, i) => b === fabricId[i])) throw new DocaError('INVALID_VALUE', call, 'the export blob was made in another fabric');
    this.view = new DataView(blob.buffer, blob.byteOffset + BLOB_HEADER_SIZE, payloadSize);
  }

  descriptor(offset: number): SegmentDescriptor {
    return decodeDescriptor(this.view, offset, this.call);
  }

  text(offset: number, size: number): string {
    const raw = new Uint8Array(this.view.buffer, this.view.byteOffset + offset, size);
    const end = raw.indexOf(0);
    return new TextDecoder().decode(end < 0 ? raw : raw.subarray(0, end));
  }

  raw(offset: number, size: number): Uint8Array {
    return new Uint8Array(this.view.buffer.slice(this.view.byteOffset + offset, this.view.byteOffset + offset + size));
  }
}

export { DESCRIPTOR_SIZE };
