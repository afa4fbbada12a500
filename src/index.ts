/**
 * softdpu: NVIDIA DOCA Comch and DOCA Sync Event, with the DOCA Core objects they use, and DOCA DPA, over
 * an emulated PCIe fabric. Names follow DOCA's in TypeScript casing (`doca_comch_server_create` ->
 * `ComchServer.create`); docs/doca-mapping.md has the whole `doca_*` -> softdpu table.
 *
 * @example
 * ```ts
 * import { ComchClient, ProgressEngine, openDeviceByPci } from 'softdpu';
 *
 * const pe = ProgressEngine.create();
 * const client = ComchClient.create(openDeviceByPci('b1:00.0'), 'echo');
 * pe.connectCtx(client);
 * client.taskSendSetConf(() => {}, () => {}, 16);
 * client.start();
 * const connection = await client.connected({ timeoutMs: 10_000 });
 * ```
 *
 * @module softdpu
 */
export * from './core/error.js';
export * from './core/log.js';
export * from './core/caps.js';
export * from './core/devinfo.js';
export * from './core/dev.js';
export * from './core/pe.js';
export * from './core/ctx.js';
export * from './core/task.js';
export * from './core/mmap.js';
export * from './core/buf.js';
export { allocSharedMemory, freeSharedMemory } from './core/memory.js';
export * from './comch/caps.js';
export * from './sync-event/caps.js';
export { type WaitOptions } from './core/wait.js';
export { Fabric, currentFabric, useFabric, type FabricOptions } from './fabric/fabric.js';
export { type SweepReport } from './fabric/dir.js';
export { PciAddress } from './fabric/pci.js';
export {
  DEFAULT_CAPS,
  DEFAULT_TOPOLOGY_JSON,
  loadTopology,
  loadTopologyFile,
  parseTopology,
  type Caps,
  type ComchCaps,
  type ConsumerCaps,
  type DpaCaps,
  type MmapCaps,
  type ProducerCaps,
  type SyncEventCaps,
  type DeviceSpec,
  type FunctionType,
  type RepresentorSpec,
  type Side,
  type Topology,
} from './fabric/topology.js';
export { Segment, type SegmentDescriptor, type WaitOutcome } from './fabric/segment.js';
export { ComchServer, type ComchConnectionStatusCb } from './comch/server.js';
export { ComchClient } from './comch/client.js';
export { ComchConnection, ComchCounter } from './comch/connection.js';
export { ComchSendTask } from './comch/send-task.js';
export { type ComchEvent, type ComchMessage, type ComchMsgRecvCb, type ComchConsumerEventCb } from './comch/comch-ctx.js';
export { ComchConsumer } from './comch/consumer.js';
export { ComchConsumerPostRecvTask } from './comch/post-recv-task.js';
export { ComchProducer } from './comch/producer.js';
export { ComchProducerSendTask } from './comch/producer-task.js';
export { type ComchConnectionRef } from './comch/endpoint-table.js';
export { type ComchReceived, type ProducerSendOptions, type RetryPolicy } from './comch/fastpath-adapters.js';
export { SyncEvent, type SyncEventLocation, type SyncWaitOptions } from './sync-event/sync-event.js';
export { SyncEventContext } from './sync-event/ctx.js';
export { SyncEventRemoteNet, type RemoteNetHandleOptions } from './sync-event/remote-net.js';
export { type RemoteNetOptions } from './sync-event/remote-net-server.js';
export {
  SyncEventTaskGet,
  SyncEventTaskNotifyAdd,
  SyncEventTaskNotifySet,
  SyncEventTaskWait,
  SyncEventTaskWaitEq,
  SyncEventTaskWaitNeq,
} from './sync-event/tasks.js';
export { Dpa, dpaCapIsSupported } from './dpa/dpa.js';
export { DpaApp, DpaFunc, type DpaFuncRef } from './dpa/app.js';
export { DpaThread } from './dpa/thread.js';
export { DevLogLevel as DpaDevLogLevel, SubmitFlag as DpaSubmitFlag } from './dpa/dev/core.js';
export { CompletionType as DpaCompletionType } from './dpa/cq.js';
export { DpaAsyncOps } from './dpa/async-ops.js';
export { DpaCompletion } from './dpa/completion.js';
export { DpaNotificationCompletion } from './dpa/notification-completion.js';
export { ComchConsumerCompletion } from './dpa/consumer-completion.js';
export { ComchDpaConsumer } from './dpa/comch-consumer.js';
export { ComchDpaProducer } from './dpa/comch-producer.js';
export { ComchMsgq, type MsgqDpa } from './comch/msgq.js';
export { Faults, type FaultListing, type FaultTarget, type ListedFault } from './fabric/faults/api.js';
export { FAULT_BLOBS, FAULT_EVENTS, FAULT_KINDS, type Fault, type FaultCaps, type FaultKind, type FaultMatch, type FaultPlan, type FaultSpec } from './fabric/faults/plan.js';
