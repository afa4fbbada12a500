/**
 * Properties of the topology parser, fed any JSON: a valid file gives the devices, representors and
 * capabilities it describes (read back through the capability queries); any JSON value, any change to
 * a valid file and any file text gives either a topology that holds together or DOCA_ERROR_BAD_CONFIG
 * naming a field of the document, never another exception.
 *
 * Replay a failure: SOFTDPU_FC_SEED=<seed> node --test dist/test/property-topology.test.js (the seed is
 * printed with each property and in the failure).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import * as comchCaps from '../src/comch/caps.js';
import { capabilityReport } from '../src/core/caps.js';
import { Devinfo } from '../src/core/devinfo.js';
import { DocaError } from '../src/core/error.js';
import { mmapCapIsCreateFromExportPciSupported, mmapCapIsExportPciSupported } from '../src/core/mmap.js';
import type { Fabric } from '../src/fabric/fabric.js';
import { type Caps, DEFAULT_CAPS, type DeviceSpec, findDevice, loadTopologyFile, parseTopology, type RepresentorSpec, representorOf, type Topology } from '../src/fabric/topology.js';
import * as seCaps from '../src/sync-event/caps.js';
import { tempFabricDir } from './helpers/fabric.js';
import { checkProperty } from './helpers/property.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Capabilities a topology may not claim (docs/topology.md: softdpu has no GPU). */
const GPU = new Set(['exportToGpu', 'remoteNetExportToGpu']);

const capValue = (field: string, value: number | boolean): fc.Arbitrary<number | boolean> =>
  typeof value === 'boolean' ? (GPU.has(field) ? fc.constant(false) : fc.boolean()) : fc.integer({ min: field === 'maxNameLen' ? 2 : 1, max: value });

/** A valid override of some capabilities: numbers in [1, default] (defaults are within the limits), booleans but the GPU ones. */
const capsOverride = fc.record(
  Object.fromEntries(
    Object.entries(DEFAULT_CAPS).map(([group, fields]) => [group, fc.record(Object.fromEntries(Object.entries(fields as Record<string, number | boolean>).map(([f, v]) => [f, capValue(f, v)])), { requiredKeys: [], noNullPrototype: true })]),
  ),
  { requiredKeys: [], noNullPrototype: true },
) as fc.Arbitrary<Record<string, Record<string, number | boolean>>>;

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const address = fc.record({ domain: fc.constantFrom(0, 0, 0, 1, 0xffff), bus: fc.integer({ min: 0, max: 255 }), device: fc.integer({ min: 0, max: 31 }), func: fc.integer({ min: 0, max: 7 }) });
type Address = { domain: number; bus: number; device: number; func: number };
const longForm = (a: Address) => `${hex(a.domain, 4)}:${hex(a.bus, 2)}:${hex(a.device, 2)}.${a.func}`;
/** Either written form (short only in domain 0), in either case. */
const written = (a: Address, short: boolean, upper: boolean) => {
  const text = short && a.domain === 0 ? longForm(a).slice(5) : longForm(a);
  return upper ? text.toUpperCase() : text;
};

/** Names a file may give a device; the parser's own otherwise. */
interface Named {
  ibdev?: string;
  iface?: string;
  mac?: string;
}
interface ArmModel extends Named {
  address: Address;
}
interface HostModel extends Named {
  address: Address;
  type: 'PF' | 'VF' | 'SF';
  arm: number;
  emulated: boolean;
  hotplug: boolean;
}
interface DpuModel {
  name: string;
  arms: ArmModel[];
  hosts: HostModel[];
  caps: Caps;
}
/** A valid topology document and what it describes. */
interface Generated {
  doc: Json;
  dpus: DpuModel[];
}

function merge(base: Caps, override: Record<string, Record<string, number | boolean>> | undefined): Caps {
  const merged = structuredClone(base) as unknown as Record<string, Record<string, number | boolean>>;
  for (const [group, fields] of Object.entries(override ?? {})) Object.assign(merged[group]!, fields);
  return merged as unknown as Caps;
}

const text = fc.string({ minLength: 1, maxLength: 40 });
const mac = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 6, maxLength: 6 }).chain((bytes) => fc.boolean().map((upper) => bytes.map((b) => hex(b, 2)).join(':')[upper ? 'toUpperCase' : 'toLowerCase']()));

const validTopology: fc.Arbitrary<Generated> = fc
  .array(fc.record({ arms: fc.integer({ min: 1, max: 2 }), hosts: fc.integer({ min: 0, max: 4 }) }), { minLength: 1, maxLength: 3 })
  .chain((shape) => {
    const count = shape.reduce((n, s) => n + s.arms + s.hosts, 0);
    const dpus = shape.map((s, d) =>
      fc.record({
        name: fc.option(text.map((n) => `dpu${d}-${n}`), { nil: undefined }),
        arms: fc.array(fc.record({ short: fc.boolean(), upper: fc.boolean(), ibdev: fc.option(text, { nil: undefined }), iface: fc.option(text, { nil: undefined }), mac: fc.option(mac, { nil: undefined }) }), { minLength: s.arms, maxLength: s.arms }),
        hosts: fc.array(
          fc.record({
            short: fc.boolean(),
            upper: fc.boolean(),
            type: fc.option(fc.constantFrom('PF', 'VF', 'SF') as fc.Arbitrary<'PF' | 'VF' | 'SF'>, { nil: undefined }),
            arm: fc.option(fc.integer({ min: 0, max: s.arms - 1 }), { nil: undefined }),
            emulated: fc.option(fc.boolean(), { nil: undefined }),
            hotplug: fc.option(fc.boolean(), { nil: undefined }),
            sfnum: fc.option(fc.nat(1000), { nil: undefined }),
            iface: fc.option(text, { nil: undefined }),
          }),
          { minLength: s.hosts, maxLength: s.hosts },
        ),
        caps: fc.option(capsOverride, { nil: undefined }),
      }),
    );
    return fc.tuple(fc.uniqueArray(address, { minLength: count, maxLength: count, selector: longForm }), fc.option(capsOverride, { nil: undefined }), fc.tuple(...dpus));
  })
  .map(([addresses, fabricCaps, dpus]) => {
    let next = 0;
    const fabric = merge(DEFAULT_CAPS, fabricCaps);
    const model: DpuModel[] = [];
    const docDpus = dpus.map((dpu, d) => {
      const arms: ArmModel[] = dpu.arms.map((a) => ({ address: addresses[next++]!, ibdev: a.ibdev, iface: a.iface, mac: a.mac }));
      const hosts: HostModel[] = dpu.hosts.map((h) => ({ address: addresses[next++]!, type: h.type ?? 'PF', arm: h.arm ?? 0, emulated: h.emulated ?? false, hotplug: h.hotplug ?? false, iface: h.iface }));
      model.push({ name: dpu.name ?? `bf${d}`, arms, hosts, caps: merge(fabric, dpu.caps) });
      const strip = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
      return strip({
        name: dpu.name,
        arm: dpu.arms.map((a, i) => strip({ pci: written(arms[i]!.address, a.short, a.upper), ibdev: a.ibdev, iface: a.iface, mac: a.mac })),
        host: dpu.hosts.map((h, i) =>
          strip({
            pci: written(hosts[i]!.address, h.short, h.upper),
            type: h.type,
            arm: h.arm === undefined ? undefined : longForm(arms[h.arm]!.address),
            emulated: h.emulated,
            hotplug: h.hotplug,
            sfnum: h.type === 'SF' ? h.sfnum : undefined,
            iface: h.iface,
          }),
        ),
        caps: dpu.caps,
      });
    });
    const doc = (fabricCaps ? { caps: fabricCaps, dpus: docDpus } : { dpus: docDpus }) as Json;
    return { doc, dpus: model };
  });

const fakeFabric = {} as Fabric;

/** `doca_sync_event_cap_*`, by the field each answers. */
const SYNC_EVENT_QUERIES: Record<keyof Caps['syncEvent'], (d: Devinfo) => boolean> = {
  createFromExport: seCaps.syncEventCapIsCreateFromExportSupported,
  remoteNetCreateFromExport: seCaps.syncEventCapRemoteNetIsCreateFromExportSupported,
  exportToRemotePci: seCaps.syncEventCapIsExportToRemotePciSupported,
  exportToRemoteNet: seCaps.syncEventCapIsExportToRemoteNetSupported,
  exportToDpa: seCaps.syncEventCapIsExportToDpaSupported,
  exportToGpu: seCaps.syncEventCapIsExportToGpuSupported,
  remoteNetExportToDpa: seCaps.syncEventCapRemoteNetIsExportToDpaSupported,
  remoteNetExportToGpu: seCaps.syncEventCapRemoteNetIsExportToGpuSupported,
  taskGet: seCaps.syncEventCapTaskGetIsSupported,
  taskNotifySet: seCaps.syncEventCapTaskNotifySetIsSupported,
  taskNotifyAdd: seCaps.syncEventCapTaskNotifyAddIsSupported,
  taskWaitEq: seCaps.syncEventCapTaskWaitEqIsSupported,
  taskWaitNeq: seCaps.syncEventCapTaskWaitNeqIsSupported,
};

/** The answers of the DOCA capability queries, asked of a devinfo of the device. */
function queried(spec: DeviceSpec): Caps {
  const d = new Devinfo(spec, fakeFabric);
  const c = comchCaps;
  return {
    comch: { maxNameLen: c.comchCapGetMaxNameLen(d), maxMsgSize: c.comchCapGetMaxMsgSize(d), maxRecvQueueSize: c.comchCapGetMaxRecvQueueSize(d), maxClients: c.comchCapGetMaxClients(d), maxSendTasks: c.comchCapGetMaxSendTasks(d) },
    consumer: {
      maxNumTasks: c.comchConsumerCapGetMaxNumTasks(d),
      maxBufSize: c.comchConsumerCapGetMaxBufSize(d),
      maxBufListLen: c.comchConsumerCapGetMaxBufListLen(d),
      maxConsumers: c.comchConsumerCapGetMaxConsumers(d),
      maxImmDataLen: c.comchConsumerCapGetMaxImmDataLen(d),
    },
    producer: { maxNumTasks: c.comchProducerCapGetMaxNumTasks(d), maxBufSize: c.comchProducerCapGetMaxBufSize(d), maxBufListLen: c.comchProducerCapGetMaxBufListLen(d), maxProducers: c.comchProducerCapGetMaxProducers(d) },
    syncEvent: Object.fromEntries(Object.entries(SYNC_EVENT_QUERIES).map(([field, query]) => [field, query(d)])) as unknown as Caps['syncEvent'],
    mmap: { exportPci: mmapCapIsExportPciSupported(d), createFromExportPci: mmapCapIsCreateFromExportPciSupported(d) },
    dpa: (({ supported: _, ...numbers }) => numbers)(capabilityReport(spec).dpa),
  };
}

/** What holds of every topology the parser accepts, whatever document it came from. */
function holdsTogether(topo: Topology): void {
  const seen = new Set<string>();
  assert.equal(new Set(topo.dpus).size, topo.dpus.length, 'DPU names are unique');
  for (const spec of topo.devices) {
    const key = spec.pci.toString();
    assert.ok(!seen.has(key), `${key} is listed once`);
    seen.add(key);
    assert.equal(findDevice(topo, key), spec);
    if (spec.pci.domain === 0) assert.equal(findDevice(topo, spec.pci.bdf), spec, 'the short form finds it too');
    assert.ok(topo.dpus.includes(spec.dpu));
    const report = capabilityReport(spec);
    assert.equal(comchCaps.comchCapServerIsSupported(new Devinfo(spec, fakeFabric)), spec.side === 'dpu');
    assert.equal(comchCaps.comchCapClientIsSupported(new Devinfo(spec, fakeFabric)), spec.side === 'host');
    assert.equal(report.dpa.supported, spec.side === 'dpu' || spec.funcType === 'PF');
    assert.ok(report.comch.maxNameLen >= 2, 'room for a character and the NUL');
    assert.ok(!report.syncEvent.exportToGpu && !report.syncEvent.remoteNetExportToGpu, 'no GPU');
    for (const group of Object.values(spec.caps) as Record<string, number | boolean>[]) {
      for (const v of Object.values(group)) assert.ok(typeof v === 'boolean' || (Number.isInteger(v) && v >= 1 && v <= 2 ** 32 - 1));
    }
    if (spec.side === 'host') {
      const rep = representorOf(topo, spec.pci);
      assert.ok(rep, `${key} has a representor`);
      assert.equal(rep.funcType, spec.funcType);
      const arm = findDevice(topo, rep.arm)!;
      assert.equal(arm.side, 'dpu');
      assert.equal(arm.dpu, spec.dpu, 'its representor is on an Arm device of its own DPU');
      assert.ok(arm.representors.includes(rep));
    } else {
      assert.equal(spec.funcType, undefined);
      for (const rep of spec.representors) assert.ok(rep.arm.equals(spec.pci));
    }
  }
}

type Step = string | number;

/** Every place in `doc`: its steps from the root, and its path as the parser writes it (`$.dpus[0].arm[1].pci`). */
function placesOf(doc: unknown, steps: Step[] = [], out: { steps: Step[]; path: string }[] = []): { steps: Step[]; path: string }[] {
  out.push({ steps, path: '$' + steps.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('') });
  if (Array.isArray(doc)) doc.forEach((v, i) => placesOf(v, [...steps, i], out));
  else if (typeof doc === 'object' && doc !== null) for (const [k, v] of Object.entries(doc)) placesOf(v, [...steps, k], out);
  return out;
}

/** Fields the parser may name that a document leaves out: required ones, and a defaulted name found twice. */
const ABSENT = ['dpus', 'arm', 'pci', 'name'];

/** Parses `doc`: the topology if accepted (it must hold together), else the BAD_CONFIG error, which names a field of `doc`. */
function parsed(doc: unknown): Topology | DocaError {
  let topo: Topology;
  try {
    topo = parseTopology(doc, 'property.json');
  } catch (err) {
    assert.ok(err instanceof DocaError, `parseTopology threw ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`);
    assert.equal(err.code, 'DOCA_ERROR_BAD_CONFIG', err.message);
    const paths = placesOf(doc).map((p) => p.path);
    const names = (p: string) => err.message.startsWith(`topology: ${p}: `);
    assert.ok(paths.some(names) || paths.some((p) => ABSENT.some((f) => names(`${p}.${f}`))), `the error names no field of the document: ${err.message}`);
    return err;
  }
  holdsTogether(topo);
  return topo;
}

test('valid topologies give exactly the devices, representors and capabilities they describe', { timeout: 150_000 }, async (t) => {
  await checkProperty(
    t,
    fc.property(validTopology, ({ doc, dpus }) => {
      const topo = parsed(doc);
      assert.ok(!(topo instanceof DocaError), `refused: ${(topo as DocaError).message}`);
      assert.deepEqual(topo.dpus, dpus.map((d) => d.name));
      const expected = dpus.flatMap((d) => [...d.arms.map((a) => ({ pci: longForm(a.address), side: 'dpu', dpu: d.name })), ...d.hosts.map((h) => ({ pci: longForm(h.address), side: 'host', dpu: d.name }))]);
      assert.deepEqual(
        topo.devices.map((s) => ({ pci: s.pci.toString(), side: s.side, dpu: s.dpu })),
        expected,
      );
      for (const d of dpus) {
        for (const h of d.hosts) {
          const rep: RepresentorSpec = representorOf(topo, longForm(h.address))!;
          assert.deepEqual([rep.funcType, rep.arm.toString(), rep.emulated, rep.hotplug], [h.type, longForm(d.arms[h.arm]!.address), h.emulated, h.hotplug]);
          assert.equal(findDevice(topo, longForm(h.address))!.funcType, h.type);
        }
        for (const named of [...d.arms, ...d.hosts]) {
          const spec: DeviceSpec = findDevice(topo, longForm(named.address))!;
          assert.deepEqual(queried(spec), d.caps, 'the capability queries answer what the file says');
          for (const key of ['ibdev', 'iface'] as const) if (named[key] !== undefined) assert.equal(spec[key], named[key]);
          if (named.mac !== undefined) assert.equal(spec.mac, named.mac.toLowerCase());
        }
      }
    }),
    600,
  );
});

/** `doc` with the value at `steps` replaced by what `change` makes of it (undefined: removed). */
function edit(doc: Json | undefined, steps: readonly Step[], change: (value: Json | undefined) => Json | undefined): Json | undefined {
  if (steps.length === 0) return change(doc);
  const [step, ...rest] = steps;
  if (Array.isArray(doc)) {
    const copy = [...doc];
    const v = edit(copy[step as number], rest, change);
    if (v === undefined) copy.splice(step as number, 1);
    else copy[step as number] = v;
    return copy;
  }
  const copy = { ...(doc as Record<string, Json>) };
  const v = edit(copy[step as string], rest, change);
  if (v === undefined) delete copy[step as string];
  else copy[step as string] = v;
  return copy;
}

const valueAt = (doc: Json, steps: readonly Step[]): Json | undefined => steps.reduce<Json | undefined>((v, s) => (v as Record<string, Json>)?.[s as string], doc);
const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One change to a document: a value replaced by any JSON, a value removed, an unknown field added, or an address reused. */
function mutated(doc: Json): fc.Arbitrary<Json | undefined> {
  const places = placesOf(doc);
  const pcis = places.filter((p) => p.steps.at(-1) === 'pci');
  return fc.oneof(
    fc.tuple(fc.constantFrom(...places), fc.jsonValue({ maxDepth: 3 })).map(([p, v]) => edit(doc, p.steps, () => v as Json)),
    fc.constantFrom(...places).map((p) => edit(doc, p.steps, () => undefined)),
    fc.tuple(fc.constantFrom(...places), fc.constantFrom('extra', 'Name', 'pcie', 'dpu', 'maxMsg'), fc.jsonValue({ maxDepth: 1 })).map(([p, key, v]) => edit(doc, p.steps, (o) => (isObject(o) ? { ...o, [key]: v as Json } : o))),
    fc.tuple(fc.constantFrom(...pcis), fc.constantFrom(...pcis)).map(([to, from]) => edit(doc, to.steps, () => valueAt(doc, from.steps))),
  );
}

test('any change to a valid topology gives a topology that holds together, or BAD_CONFIG naming a field', { timeout: 150_000 }, async (t) => {
  let refused = 0;
  await checkProperty(
    t,
    fc.property(validTopology.chain(({ doc }) => mutated(doc)), (doc) => {
      if (parsed(doc) instanceof DocaError) refused++;
    }),
    2000,
  );
  t.diagnostic(`${refused} of 2000 changed topologies refused`);
});

test('any JSON value gives a topology that holds together, or BAD_CONFIG naming a field', { timeout: 150_000 }, async (t) => {
  const shaped = fc.record({ dpus: fc.array(fc.record({ arm: fc.jsonValue({ maxDepth: 2 }), host: fc.jsonValue({ maxDepth: 2 }), name: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: [] }), { maxLength: 3 }), caps: fc.jsonValue({ maxDepth: 3 }) }, { requiredKeys: [] });
  await checkProperty(
    t,
    fc.property(fc.oneof(fc.jsonValue({ maxDepth: 4 }), shaped), (doc) => void parsed(doc)),
    1500,
  );
});

test('any topology file text gives a topology or BAD_CONFIG, never another exception', { timeout: 150_000 }, async (t) => {
  const file = join(tempFabricDir(t), 'topology.json');
  const content = fc.oneof(
    validTopology.map(({ doc }) => JSON.stringify(doc)),
    validTopology.chain(({ doc }) => fc.nat().map((n) => JSON.stringify(doc).slice(0, n % (JSON.stringify(doc).length + 1)))),
    fc.json(),
    fc.string({ unit: 'binary', maxLength: 200 }),
  );
  await checkProperty(
    t,
    fc.property(content, (textContent) => {
      writeFileSync(file, textContent);
      try {
        holdsTogether(loadTopologyFile(file));
      } catch (err) {
        assert.ok(DocaError.is(err, 'BAD_CONFIG'), `loadTopologyFile threw ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`);
      }
    }),
    400,
  );
});
