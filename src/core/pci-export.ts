/**
 * What every PCI export blob (`doca_mmap_export_pci`, `doca_sync_event_export_to_remote_pci`) carries to
 * tie it to its exporter, written and checked in one place: the export slot (so the importer can tell a
 * revoked export or a dead exporter) and the DPU the export is for (an import from another DPU is wrong).
 *
 * Trailer layout (docs/protocol.md#pci-trailer), at the offset the payload gives it: u32 slot index, i32 slot generation, export table
 * descriptor, DPU name [64].
 */
import type { Devinfo } from './devinfo.js';
import { DocaError } from './error.js';
import { type BlobReader, type BlobWriter, DESCRIPTOR_SIZE } from './blob.js';
import { exportIsValid, type ExportSlot } from '../fabric/exports.js';

export const PCI_TRAILER_SIZE = 4 + 4 + DESCRIPTOR_SIZE + 64;

export function writePciTrailer(w: BlobWriter, at: number, slot: ExportSlot, info: Devinfo): void {
  w.view.setUint32(at, slot.index, true);
  w.view.setInt32(at + 4, slot.generation, true);
  w.descriptor(at + 8, slot.table);
  w.text(at + 8 + DESCRIPTOR_SIZE, 64, info.spec.dpu);
}

/**
 * Reads the trailer and checks it against the importing device: INVALID_VALUE for another DPU,
 * NOT_FOUND when the export was revoked or its exporter died. `what` names the object ('map', 'event').
 */
export function readPciTrailer(r: BlobReader, at: number, info: Devinfo, call: string, what: string): ExportSlot {
  const dpu = r.text(at + 8 + DESCRIPTOR_SIZE, 64);
  if (dpu !== info.spec.dpu) throw new DocaError('INVALID_VALUE', call, `the ${what} was exported on DPU ${JSON.stringify(dpu)}; ${info.spec.pci} belongs to ${info.spec.dpu}`);
  const slot: ExportSlot = { index: r.view.getUint32(at, true), generation: r.view.getInt32(at + 4, true), table: r.descriptor(at + 8) };
  if (!exportIsValid(slot, call)) throw new DocaError('NOT_FOUND', call, `the export is stale: its ${what} was destroyed or its process exited`);
  return slot;
}
