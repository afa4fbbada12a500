/**
 * Sync event export to the other side of the PCIe link, and import from such a blob.
 *
 * Blob payload (after the envelope of core/blob.ts):
 *   0 control segment descriptor [40]   40 value segment descriptor [40]   80 f64 value byte offset
 *   88 the PCI export trailer (slot and DPU, core/pci-export.ts)
 */
import { BlobKind, BlobReader, BlobWriter, DESCRIPTOR_SIZE } from '../core/blob.js';
import type { Dev } from '../core/dev.js';
import { DocaError, describeValue } from '../core/error.js';
import { PCI_TRAILER_SIZE, readPciTrailer, writePciTrailer } from '../core/pci-export.js';
import { claimExportSlot, type ExportSlot } from '../fabric/exports.js';
import { descriptorKey, Segment, SEGMENT_HEADER_SIZE } from '../fabric/segment.js';
import { syncEventCapIsCreateFromExportSupported, syncEventCapIsExportToRemotePciSupported } from './caps.js';
import { controlProblem, SE_VALUE } from './layout.js';

const P_CONTROL = 0;
const P_VALUE = DESCRIPTOR_SIZE;
const P_OFFSET = 2 * DESCRIPTOR_SIZE;
const P_TRAILER = P_OFFSET + 8; // slot and DPU: core/pci-export.ts
const PAYLOAD = P_TRAILER + PCI_TRAILER_SIZE;

/** What an imported handle holds. */
export interface ImportedEvent {
  control: Segment;
  value: Segment;
  valueOffset: number;
  slot: ExportSlot;
  release(): void;
}

export function exportPci(call: string, dev: Dev, control: Segment, where: { segment: Segment; offset: number }, slot: ExportSlot | undefined): { blob: Uint8Array; slot: ExportSlot } {
  if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, `the device must be open (got ${dev?.isOpen === false ? `${dev.name}, closed` : describeValue(dev)})`);
  const info = dev.asDevinfo();
  if (!syncEventCapIsExportToRemotePciSupported(info)) throw new DocaError('NOT_SUPPORTED', call, `${info.spec.pci} cannot export sync events to remote PCI`);
  const claimed = slot ?? claimExportSlot(call);
  const w = new BlobWriter(BlobKind.SYNC_EVENT_PCI, PAYLOAD, dev.fabric.id);
  w.descriptor(P_CONTROL, control.descriptor);
  w.descriptor(P_VALUE, where.segment.descriptor);
  w.view.setFloat64(P_OFFSET, where.offset, true);
  writePciTrailer(w, P_TRAILER, claimed, info);
  return { blob: w.finish(), slot: claimed };
}

export function importPci(dev: Dev, blob: Uint8Array): ImportedEvent {
  const call = 'doca_sync_event_create_from_export';
  if (!dev?.isOpen) throw new DocaError('INVALID_VALUE', call, `the device must be open (got ${dev?.isOpen === false ? `${dev.name}, closed` : describeValue(dev)})`);
  const info = dev.asDevinfo();
  if (!syncEventCapIsCreateFromExportSupported(info)) throw new DocaError('NOT_SUPPORTED', call, `${info.spec.pci} cannot create sync events from an export`);
  const r = new BlobReader(blob, BlobKind.SYNC_EVENT_PCI, dev.fabric.id, call, PAYLOAD);
  const slot = readPciTrailer(r, P_TRAILER, info, call, 'event');
  // Both descriptors are decoded before anything is mapped: a bad value descriptor must not strand the control mapping.
  const valueDescriptor = r.descriptor(P_VALUE);
  const control = Segment.open(r.descriptor(P_CONTROL), call, ['syncevent']);
  const problem = controlProblem(control);
  if (problem) {
    control.close();
    throw new DocaError('INVALID_VALUE', call, `the segment the blob names as the event's control block ${problem}`);
  }
  let value: Segment;
  try {
    value = descriptorKey(valueDescriptor) === descriptorKey(control.descriptor) ? control : Segment.open(valueDescriptor, call, ['mem']);
  } catch (err) {
    control.close();
    throw err;
  }
  const valueOffset = r.view.getFloat64(P_OFFSET, true);
  const release = () => {
    for (const seg of new Set([control, value])) seg.close();
  };
  if (!Number.isInteger(valueOffset) || valueOffset % 8 !== 0 || valueOffset < SEGMENT_HEADER_SIZE || valueOffset + 8 > value.size) {
    release();
    throw new DocaError('INVALID_VALUE', call, `the blob names a counter at byte ${valueOffset} of a ${value.size}-byte segment`);
  }
  // In its own control block the counter has one place (SE_VALUE): any other would alias the waiter counts or table.
  if (value === control && valueOffset !== SE_VALUE) {
    release();
    throw new DocaError('INVALID_VALUE', call, `the blob names a counter at byte ${valueOffset} of the event's control block, where the counter is at byte ${SE_VALUE}`);
  }
  return { control, value, valueOffset, slot, release };
}
