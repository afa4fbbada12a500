/**
 * Sync event export to the other side of the PCIe link, and import from such a blob.
 *
 * Blob payload (after the envelope of core/blob.ts):
 *   0 control segment descriptor [40]   40 value segment descriptor [40]   80 f64 value byte offset
 *   88 u32 export slot index   92 i32 slot generation   96 export table descriptor [40]   136 DPU name [64]
 */
import { BlobKind, BlobReader, BlobWriter, DESCRIPTOR_SIZE } from '../core/blob.js';
import type { Dev } from '../core/dev.js';
import { DocaError } from '../core/error.js';
import { claimExportSlot, exportIsValid, type ExportSlot } from '../fabric/exports.js';
import { Segment } from '../fabric/segment.js';
import { syncEventCapIsCreateFromExportSupported, syncEventCapIsExportToRemotePciSupported } from './caps.js';
import { SE_LIVE, SE_STATE } from './layout.js';

const P_CONTROL = 0;
const P_VALUE = DESCRIPTOR_SIZE;
const P_OFFSET = 2 * DESCRIPTOR_SIZE;
const P_SLOT = P_OFFSET + 8;
const P_GEN = P_SLOT + 4;
const P_TABLE = P_GEN + 4;
const P_DPU = P_TABLE + DESCRIPTOR_SIZE;
const PAYLOAD = P_DPU + 64;

/** What an imported handle holds. */
export interface Imported {
  control: Segment;
  value: Segment;
  valueOffset: number;
  slot: ExportSlot;
  release(): void;
}

export function exportPci(call: string, dev: Dev, control: Segment, where: { segment: Segment; offset: number }, slot: ExportSlot | undefined): { blob: Uint8Array; slot: ExportSlot } {
  if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, 'the device must be open');
  const info = dev.asDevinfo();
  if (!syncEventCapIsExportToRemotePciSupported(info)) throw new DocaError('NOT_SUPPORTED', call, `${info.spec.pci} cannot export sync events to remote PCI`);
  const claimed = slot ?? claimExportSlot(call);
  const w = new BlobWriter(BlobKind.SYNC_EVENT_PCI, PAYLOAD, dev.fabric.id);
  w.descriptor(P_CONTROL, control.descriptor);
  w.descriptor(P_VALUE, where.segment.descriptor);
  w.view.setFloat64(P_OFFSET, where.offset, true);
  w.view.setUint32(P_SLOT, claimed.index, true);
  w.view.setInt32(P_GEN, claimed.generation, true);
  w.descriptor(P_TABLE, claimed.table);
  w.text(P_DPU, 64, info.spec.dpu);
  return { blob: w.finish(), slot: claimed };
}

export function importPci(dev: Dev, blob: Uint8Array): Imported {
  const call = 'doca_sync_event_create_from_export';
  if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, 'the device must be open');
  const info = dev.asDevinfo();
  if (!syncEventCapIsCreateFromExportSupported(info)) throw new DocaError('NOT_SUPPORTED', call, `${info.spec.pci} cannot create sync events from an export`);
  const r = new BlobReader(blob, BlobKind.SYNC_EVENT_PCI, dev.fabric.id, call, PAYLOAD);
  const dpu = r.text(P_DPU, 64);
  if (dpu !== info.spec.dpu) throw new DocaError('INVALID_VALUE', call, `the event was exported on DPU ${JSON.stringify(dpu)}; ${info.spec.pci} belongs to ${info.spec.dpu}`);
  const slot: ExportSlot = { table: r.descriptor(P_TABLE), index: r.view.getUint32(P_SLOT, true), generation: r.view.getInt32(P_GEN, true) };
  if (!exportIsValid(slot, call)) throw new DocaError('NOT_FOUND', call, 'the export is stale: its event was destroyed or its process exited');
  const control = Segment.open(r.descriptor(P_CONTROL), call);
  const valueDescriptor = r.descriptor(P_VALUE);
  let value: Segment;
  try {
    value = valueDescriptor.fd === control.descriptor.fd && valueDescriptor.pid === control.descriptor.pid ? control : Segment.open(valueDescriptor, call);
  } catch (err) {
    control.close();
    throw err;
  }
  const valueOffset = r.view.getFloat64(P_OFFSET, true);
  const release = () => {
    for (const seg of new Set([control, value])) {
      try {
        seg.close();
      } catch {
        // a cancelled wait is still being delivered; the finalizer unmaps it later
      }
    }
  };
  if (!Number.isInteger(valueOffset) || valueOffset % 8 !== 0 || valueOffset < 64 || valueOffset + 8 > value.size || Atomics.load(control.i32, SE_STATE / 4) !== SE_LIVE) {
    release();
    throw new DocaError('INVALID_VALUE', call, `the blob names a counter at byte ${valueOffset} of a ${value.size}-byte segment, or a dead event`);
  }
  return { control, value, valueOffset, slot, release };
}
