/**
 * `softdpu demo` (what `npm start` runs): NVIDIA's sample pairs, each side in its own process (the DPU's
 * Arm side and the host), on a private fabric that is removed afterwards. It shows the control path, the
 * fast path and a sync event crossing the emulated PCIe link, with each side's log in arrival order.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTopology } from '../fabric/topology.js';

const MAIN = fileURLToPath(new URL('./main.js', import.meta.url));
/** Each sample bounds itself with --timeout; the watchdog only catches a sample that ignores it. */
const SAMPLE_TIMEOUT_S = 20;
const WATCHDOG_MS = (SAMPLE_TIMEOUT_S + 10) * 1000;

interface Scenario {
  title: string;
  dpu: (arm: string, rep: string) => string[];
  host: (fn: string) => string[];
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

export async function demo(topology: string | undefined): Promise<number> {
  const { arm, host } = pickDevices(topology);
  const fabric = mkdtempSync(join(tmpdir(), 'softdpu-demo-'));
  const out = (s: string) => process.stdout.write(`${s}\n`);
  out(`softdpu demo: the DPU side (Arm device ${arm}) and the host side (function ${host}) are separate`);
  out(`processes joined by an emulated PCIe fabric of shared memory, futexes and Unix sockets (${fabric}).`);
  let failed = 0;
  try {
    for (const [i, s] of SCENARIOS.entries()) {
      out(`\n${i + 1}. ${s.title}`);
      out(`   dpu:  softdpu sample ${s.dpu(arm, host).join(' ')}`);
      out(`   host: softdpu sample ${s.host(host).join(' ')}`);
      const log: string[] = [];
      const t0 = performance.now();
      const codes = await Promise.all([runSample(s.dpu(arm, host), 'dpu', fabric, topology, log), runSample(s.host(host), 'host', fabric, topology, log)]);
      const ms = Math.round(performance.now() - t0);
      for (const line of log) out(line);
      if (codes.every((c) => c === 0)) out(`   ok (${ms} ms, both processes exited 0)`);
      else {
        failed++;
        out(`   FAILED: exit codes dpu ${codes[0]}, host ${codes[1]}`);
      }
    }
  } finally {
    rmSync(fabric, { recursive: true, force: true });
  }
  out(failed ? `\n${failed} of ${SCENARIOS.length} scenarios failed.` : `\nAll ${SCENARIOS.length} scenarios passed. Next: softdpu sample --list, npm run bench, docs/.`);
  return failed ? 1 : 0;
}
