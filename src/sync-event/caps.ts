/** Sync event capability queries (`doca_sync_event_cap_*`), answered from the topology. */
import { capabilityReport } from '../core/caps.js';
import type { Devinfo } from '../core/devinfo.js';

const se = (d: Devinfo) => capabilityReport(d.spec).syncEvent;

/** `doca_sync_event_cap_is_create_from_export_supported`. */
export const syncEventCapIsCreateFromExportSupported = (d: Devinfo): boolean => se(d).createFromExport;
/** `doca_sync_event_cap_remote_net_is_create_from_export_supported`. */
export const syncEventCapRemoteNetIsCreateFromExportSupported = (d: Devinfo): boolean => se(d).remoteNetCreateFromExport;
/** `doca_sync_event_cap_is_export_to_remote_pci_supported`. */
export const syncEventCapIsExportToRemotePciSupported = (d: Devinfo): boolean => se(d).exportToRemotePci;
/** `doca_sync_event_cap_is_export_to_remote_net_supported`. */
export const syncEventCapIsExportToRemoteNetSupported = (d: Devinfo): boolean => se(d).exportToRemoteNet;
/** `doca_sync_event_cap_is_export_to_dpa_supported`. */
export const syncEventCapIsExportToDpaSupported = (d: Devinfo): boolean => se(d).exportToDpa;
/** `doca_sync_event_cap_is_export_to_gpu_supported`: false, GPU features are not supported. */
export const syncEventCapIsExportToGpuSupported = (d: Devinfo): boolean => se(d).exportToGpu;
/** `doca_sync_event_cap_remote_net_is_export_to_dpa_supported`. */
export const syncEventCapRemoteNetIsExportToDpaSupported = (d: Devinfo): boolean => se(d).remoteNetExportToDpa;
/** `doca_sync_event_cap_remote_net_is_export_to_gpu_supported`. */
export const syncEventCapRemoteNetIsExportToGpuSupported = (d: Devinfo): boolean => se(d).remoteNetExportToGpu;
/** `doca_sync_event_cap_task_get_is_supported`. */
export const syncEventCapTaskGetIsSupported = (d: Devinfo): boolean => se(d).taskGet;
/** `doca_sync_event_cap_task_notify_set_is_supported`. */
export const syncEventCapTaskNotifySetIsSupported = (d: Devinfo): boolean => se(d).taskNotifySet;
/** `doca_sync_event_cap_task_notify_add_is_supported`. */
export const syncEventCapTaskNotifyAddIsSupported = (d: Devinfo): boolean => se(d).taskNotifyAdd;
/** `doca_sync_event_cap_task_wait_eq_is_supported`. */
export const syncEventCapTaskWaitEqIsSupported = (d: Devinfo): boolean => se(d).taskWaitEq;
/** `doca_sync_event_cap_task_wait_neq_is_supported`. */
export const syncEventCapTaskWaitNeqIsSupported = (d: Devinfo): boolean => se(d).taskWaitNeq;
