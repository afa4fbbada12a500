/** `softdpu devices [--json]`: the devices of the fabric, like `doca_caps --list-devs`. */
import { type CapabilityReport, capabilityReport } from '../core/caps.js';
import type { Fabric } from '../fabric/fabric.js';
import { Faults } from '../fabric/faults/api.js';
import type { DeviceSpec } from '../fabric/topology.js';
import { formatListing } from './fault.js';

interface DeviceEntry {
  pci: string;
  side: string;
  dpu: string;
  funcType?: string;
  ibdev: string;
  iface: string;
  mac: string;
  vhcaId: number;
  representors: { pci: string; funcType: string; iface: string; vuid: string; emulated: boolean }[];
  caps: CapabilityReport;
}

function entry(spec: DeviceSpec): DeviceEntry {
  return {
    pci: spec.pci.toString(),
    side: spec.side,
    dpu: spec.dpu,
    ...(spec.funcType ? { funcType: spec.funcType } : {}),
    ibdev: spec.ibdev,
    iface: spec.iface,
    mac: spec.mac,
    vhcaId: spec.vhcaId,
    representors: spec.representors.map((r) => ({ pci: r.pci.toString(), funcType: r.funcType, iface: r.iface, vuid: r.vuid, emulated: r.emulated })),
    caps: capabilityReport(spec),
  };
}

const yes = (b: boolean) => (b ? 'yes' : 'no');

function text(e: DeviceEntry): string {
  const c = e.caps;
  const lines = [
    `${e.pci}  ${e.side === 'dpu' ? `DPU Arm (${e.dpu})` : `host ${e.funcType} (of ${e.dpu})`}`,
    `    ibdev ${e.ibdev}  iface ${e.iface}  mac ${e.mac}  vhca_id ${e.vhcaId}`,
  ];
  if (e.side === 'dpu') {
    lines.push(`    representors: ${e.representors.length === 0 ? 'none' : ''}`);
    for (const r of e.representors) lines.push(`      ${r.pci}  ${r.funcType}  ${r.iface}  ${r.emulated ? 'emulated' : 'net'}  vuid ${r.vuid}`);
  }
  lines.push(
    `    comch: server ${yes(c.comch.server)}, client ${yes(c.comch.client)}, max_name_len ${c.comch.maxNameLen}, ` +
      `max_msg_size ${c.comch.maxMsgSize}, max_recv_queue_size ${c.comch.maxRecvQueueSize}, max_clients ${c.comch.maxClients}, ` +
      `max_send_tasks ${c.comch.maxSendTasks}`,
    `    comch consumer: max_num_tasks ${c.consumer.maxNumTasks}, max_buf_size ${c.consumer.maxBufSize}, ` +
      `max_consumers ${c.consumer.maxConsumers}, max_imm_data_len ${c.consumer.maxImmDataLen}`,
    `    comch producer: max_num_tasks ${c.producer.maxNumTasks}, max_buf_size ${c.producer.maxBufSize}, max_producers ${c.producer.maxProducers}`,
    `    sync event: ${Object.entries(c.syncEvent)
      .map(([k, v]) => `${k} ${yes(v)}`)
      .join(', ')}`,
    `    mmap: export_pci ${yes(c.mmap.exportPci)}, create_from_export_pci ${yes(c.mmap.createFromExportPci)}`,
    `    dpa: ${c.dpa.supported ? `yes, ${c.dpa.numEus} execution units, max_threads_per_kernel ${c.dpa.maxThreadsPerKernel}, ` +
      `kernel_max_run_time ${c.dpa.kernelMaxRunTimeMs} ms, heap ${c.dpa.heapSize} bytes, max_objects ${c.dpa.maxObjects}, ` +
      `max_dpas per DPU ${c.dpa.maxDpas}` : 'no'}`,
  );
  return lines.join('\n');
}

export function devicesCommand(fabric: Fabric, json: boolean): string {
  const faults = Faults.list({ fabric: fabric.dir }); // before the caps below, which a plan's caps faults lower
  const entries = fabric.topology.devices.map(entry);
  if (json) return JSON.stringify({ fabric: fabric.dir, topology: fabric.topology.source, devices: entries, faults }, null, 2);
  const plan = faults.faults.length > 0 || (faults.processes?.length ?? 0) > 0 ? [formatListing(faults)] : [];
  return [`fabric ${fabric.dir} (topology: ${fabric.topology.source})`, ...entries.map(text), ...plan].join('\n');
}
