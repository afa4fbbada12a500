/**
 * `softdpu demo` (what `npm start` runs): NVIDIA's sample pairs, each side in its own process (the DPU's
 * Arm side and the host), on a private fabric that is removed afterwards. It shows the control path, the
 * fast path and a sync event crossing the emulated PCIe link, with each side's log in arrival order, then
 * the DPA samples (one process each: the DPA runs on worker threads of the process that starts it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveFabricDir } from '../fabric/dir.js';
import { loadTopology } from '../fabric/topology.js';

const MAIN = fileURLToPath(new URL('./main.js', import.meta.url));
/**
 * What crossed the link, as the samples' logs tell it (the closing table). Counted from the logs, not
 * by an observer of the fabric: these samples' connections live a few milliseconds, less than
 * between two looks of an observer that does not load the machine.
 */
const CROSSED: readonly [RegExp, string][] = [
  [/^Message received/, 'message'],
  [/^Signaled /, 'sync event signal'],
  [/^Kernel \S+ launched/, 'kernel launch'],
  [/^All (\d+) answers came back/, 'round trip'],
];
/** Each sample bounds itself with --timeout; the watchdog only catches a sample that ignores it. */
const SAMPLE_TIMEOUT_S = 20;
const WATCHDOG_MS = (SAMPLE_TIMEOUT_S + 10) * 1000;

/** A sample pair (its DPU side and host side in two processes), or one process (the DPA samples). */
interface Scenario {
  title: string;
  dpu?: (arm: string, rep: string) => string[];
  host?: (fn: string) => string[];
}

const SCENARIOS: Scenario[] = [
  {
    title: 'Comch control path: a server on the DPU, a client on the host, one message each way',
    dpu: (arm, rep) => ['comch_ctrl_path_server', '-p', arm, '-r', rep],
    host: (fn) => ['comch_ctrl_path_client', '-p', fn],
  },
  {
    title: 'Comch fast path: producer and consumer on each side, zero-copy into posted buffers',
    dpu: (arm, rep) => ['comch_data_path_high_speed_server', '-p', arm, '-r', rep],
    host: (fn) => ['comch_data_path_high_speed_client', '-p', fn],
  },
  {
    title: 'Sync event: the DPU exports it over comch, the host imports it, they signal 1 and 2',
    dpu: (arm, rep) => ['sync_event_local_pci', '-d', arm, '-r', rep],
    host: (fn) => ['sync_event_remote_pci', '-d', fn],
  },
  {
    title: 'Sync event, asynchronous and atomic, exported from the host this time',
    dpu: (arm, rep) => ['sync_event_remote_pci', '-d', arm, '-r', rep, '--async', '--atomic'],
    host: (fn) => ['sync_event_local_pci', '-d', fn, '--async', '--atomic'],
  },
  {
    title: "DPA: a kernel on the DPU's DPA waits for a sync event another thread sets, then completes another",
    dpu: (arm) => ['dpa_wait_kernel_launch', '-pf_dev', arm],
  },
  {
    title: "DPA: the host's DPA answers 100 messages over two comch MsgQs and counts them on a sync event",
    host: (fn) => ['comch_msgq_dpa_pingpong', '-pf_dev', fn, '-n', '100'],
  },
];

/** The first Arm device with a representor, and the host function it represents. */
function pickDevices(topologyFile: string | undefined): { arm: string; host: string } {
  const topology = loadTopology(topologyFile);
  for (const dev of topology.devices) {
    const rep = dev.representors[0];
    if (dev.side === 'dpu' && rep) return { arm: dev.pci.toString(), host: rep.pci.toString() };
  }
  throw new Error(`the topology ${topology.source} has no DPU Arm device with a host function to talk to`);
}

/** Runs one sample; its log lines land in `log` as they arrive. Resolves with its exit code. */
function runSample(args: string[], side: string, fabric: string, topology: string | undefined, log: string[]): Promise<number> {
  const extra = topology ? ['--topology', topology] : [];
  const child = spawn(process.execPath, [MAIN, 'sample', ...args, '--fabric', fabric, '--timeout', String(SAMPLE_TIMEOUT_S), ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watchdog = setTimeout(() => child.kill('SIGKILL'), WATCHDOG_MS);
  let partial = '';
  const onData = (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    // "[time][pid][APP][INF][SAMPLE] text" -> "text": the side and sample are shown by the demo.
    for (const line of lines) log.push(`   ${side.padEnd(5)}| ${line.replace(/^(\[[^\]]*\]){5} /, '')}`);
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  return new Promise((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(watchdog);
      if (partial) onData('\n');
      resolve(code ?? (signal ? 128 : 1));
    }),
  );
}

/** ['comch_ctrl_path_server', 'comch_ctrl_path_client'] -> 'comch_ctrl_path_server / _client'. */
function pairName([first, second]: string[]): string {
  if (second === undefined) return first!;
  let common = 0;
  for (let i = 0; i < Math.min(first!.length, second.length) && first![i] === second[i]; i++) if (first![i] === '_') common = i;
  return `${first} / ${second.slice(common)}`;
}

/** 'dpu  | Message received: ...' lines -> '2 messages, 1 kernel launch'. */
function crossed(log: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const line of log) {
    const text = line.replace(/^ *\S+ *\| /, '');
    for (const [re, what] of CROSSED) {
      const m = re.exec(text);
      if (m) counts.set(what, (counts.get(what) ?? 0) + (m[1] ? Number(m[1]) : 1));
    }
  }
  return [...counts].map(([what, n]) => `${n} ${what}${n === 1 ? '' : 's'}`).join(', ') || '-';
}

export async function demo(topology: string | undefined): Promise<number> {
  const { arm, host } = pickDevices(topology);
  const fabric = mkdtempSync(join(tmpdir(), 'softdpu-demo-'));
  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(`softdpu demo: the DPU side (Arm device ${arm}) and the host side (function ${host}) are separate`);
  out(`processes joined by an emulated PCIe fabric of shared memory, futexes and Unix sockets (${fabric}).`);
  let failed = 0;
  const measured: { samples: string; processes: number; ms: number; crossed: string }[] = [];
  try {
    for (const [i, s] of SCENARIOS.entries()) {
      out(`\n${i + 1}. ${s.title}`);
      const sides = [...(s.dpu ? [['dpu', s.dpu(arm, host)] as const] : []), ...(s.host ? [['host', s.host(host)] as const] : [])];
      for (const [side, args] of sides) out(`   ${`${side}:`.padEnd(5)} softdpu sample ${args.join(' ')}`);
      const log: string[] = [];
      const t0 = performance.now();
      const codes = await Promise.all(sides.map(([side, args]) => runSample([...args], side, fabric, topology, log)));
      const ms = Math.round(performance.now() - t0);
      measured.push({ samples: pairName(sides.map(([, args]) => args[0]!)), processes: sides.length, ms, crossed: crossed(log) });
      for (const line of log) out(line);
      if (codes.every((c) => c === 0)) out(`   ok (${ms} ms, ${codes.length === 1 ? 'the process' : 'both processes'} exited 0)`);
      else {
        failed++;
        out(`   FAILED: exit codes ${sides.map(([side], k) => `${side} ${codes[k]}`).join(', ')}`);
      }
    }
  } finally {
    rmSync(fabric, { recursive: true, force: true });
  }
  out(failed ? `\n${failed} of ${SCENARIOS.length} scenarios failed.` : `\nAll ${SCENARIOS.length} scenarios passed.`);
  out(`\nWhat the demo measured on the way (time: from the start to the last exit; what crossed: from the samples' logs):`);
  const width = Math.max(...measured.map((m) => m.samples.length));
  out(`      ${'samples (dpu / host)'.padEnd(width)}  ${'time'.padStart(8)}  processes  what crossed`);
  for (const [i, m] of measured.entries()) {
    out(`  ${`${i + 1}.`.padEnd(3)} ${m.samples.padEnd(width)}  ${`${m.ms} ms`.padStart(8)}  ${String(m.processes).padStart(9)}  ${m.crossed}`);
  }
  out(`\nLook further (docs/observe.md): watch a fabric while samples run on it, in separate terminals:`);
  out(`  softdpu top                  # every process and object, one line each, refreshed every second (q quits)`);
  out(`  softdpu view                 # the same as a live web page on 127.0.0.1, with a drawing and charts`);
  out(`  softdpu sample comch_ctrl_path_server -p ${arm} -r ${host}   # then its client: softdpu sample comch_ctrl_path_client -p ${host}`);
  out(`They use the default fabric, ${resolveFabricDir()} (--fabric DIR for another). More: softdpu sample --list, npm run bench, docs/.`);
  return failed ? 1 : 0;
}
