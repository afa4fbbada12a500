/**
 * Comch capability queries (doca_comch.h, doca_comch_consumer.h, doca_comch_producer.h), answered from
 * the topology as real DOCA answers them: a server only on the DPU's Arm side, a client only on the host.
 */
import { capabilityReport } from '../core/caps.js';
import type { Devinfo } from '../core/devinfo.js';

const comch = (d: Devinfo) => capabilityReport(d.spec).comch;
const consumer = (d: Devinfo) => capabilityReport(d.spec).consumer;
const producer = (d: Devinfo) => capabilityReport(d.spec).producer;

/** `doca_comch_cap_get_max_name_len`: the longest server name, including the terminating NUL. */
export const comchCapGetMaxNameLen = (d: Devinfo): number => comch(d).maxNameLen;
/** `doca_comch_cap_get_max_msg_size`. */
export const comchCapGetMaxMsgSize = (d: Devinfo): number => comch(d).maxMsgSize;
/** `doca_comch_cap_get_max_recv_queue_size`. */
export const comchCapGetMaxRecvQueueSize = (d: Devinfo): number => comch(d).maxRecvQueueSize;
/** `doca_comch_cap_get_max_clients`: clients one server accepts. */
export const comchCapGetMaxClients = (d: Devinfo): number => comch(d).maxClients;
/** `doca_comch_cap_get_max_send_tasks`. */
export const comchCapGetMaxSendTasks = (d: Devinfo): number => comch(d).maxSendTasks;
/** `doca_comch_cap_server_is_supported`: true on the DPU's Arm side only. */
export const comchCapServerIsSupported = (d: Devinfo): boolean => comch(d).server;
/** `doca_comch_cap_client_is_supported`: true on the host side only. */
export const comchCapClientIsSupported = (d: Devinfo): boolean => comch(d).client;

/** `doca_comch_consumer_cap_is_supported`. */
export const comchConsumerCapIsSupported = (d: Devinfo): boolean => consumer(d).supported;
/** `doca_comch_consumer_cap_get_max_num_tasks`. */
export const comchConsumerCapGetMaxNumTasks = (d: Devinfo): number => consumer(d).maxNumTasks;
/** `doca_comch_consumer_cap_get_max_buf_size`. */
export const comchConsumerCapGetMaxBufSize = (d: Devinfo): number => consumer(d).maxBufSize;
/** `doca_comch_consumer_cap_get_max_buf_list_len`. */
export const comchConsumerCapGetMaxBufListLen = (d: Devinfo): number => consumer(d).maxBufListLen;
/** `doca_comch_consumer_cap_get_max_consumers`: per connection. */
export const comchConsumerCapGetMaxConsumers = (d: Devinfo): number => consumer(d).maxConsumers;
/** `doca_comch_consumer_cap_get_max_imm_data_len`. */
export const comchConsumerCapGetMaxImmDataLen = (d: Devinfo): number => consumer(d).maxImmDataLen;

/** `doca_comch_producer_cap_is_supported`. */
export const comchProducerCapIsSupported = (d: Devinfo): boolean => producer(d).supported;
/** `doca_comch_producer_cap_get_max_num_tasks`. */
export const comchProducerCapGetMaxNumTasks = (d: Devinfo): number => producer(d).maxNumTasks;
/** `doca_comch_producer_cap_get_max_buf_size`. */
export const comchProducerCapGetMaxBufSize = (d: Devinfo): number => producer(d).maxBufSize;
/** `doca_comch_producer_cap_get_max_buf_list_len`. */
export const comchProducerCapGetMaxBufListLen = (d: Devinfo): number => producer(d).maxBufListLen;
/** `doca_comch_producer_cap_get_max_producers`: per connection. */
export const comchProducerCapGetMaxProducers = (d: Devinfo): number => producer(d).maxProducers;
