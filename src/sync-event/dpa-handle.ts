/**
 * What a sync event hands a DPA when DPA code is to use it (`doca_sync_event_get_dpa_handle`,
 * `doca_sync_event_remote_net_get_dpa_handle`). The DPA lives in a layer above (dpa/), so the event
 * only knows it through this interface; `Dpa` implements it.
 */
import type { Segment } from '../fabric/segment.js';

/** Where a started CPU handle's counter is, for execution units to map. */
export interface DpaEventSource {
  readonly control: Segment;
  readonly value: { segment: Segment; offset: number };
  /** The DPA waits on it (its subscriber location is the DPA): it must be rung on every update. */
  readonly subscriberIsDpa: boolean;
  /** The counter now. */
  peek(): bigint;
}

/** A DPA, as sync events see it. */
export interface DpaEventTarget {
  readonly name: string;
  /** The handle of `event` on this DPA (registered on first use); `owner` identifies the event. */
  _syncEventHandle(owner: object, event: DpaEventSource, call: string): bigint;
  /** The event is being destroyed: its handles must stop working. */
  _syncEventGone(owner: object): void;
  /** The handle of a remote-net handle on this DPA. */
  _remoteNetHandle(owner: object, call: string): bigint;
}

/** True for something that can take an event's DPA handle (a started or created `Dpa`). */
export function isDpaTarget(value: unknown): value is DpaEventTarget {
  return typeof (value as DpaEventTarget | undefined)?._syncEventHandle === 'function';
}
