/**
 * Fault injection's cost: the comch one-way rate (64-byte messages, busy-polling) with no fault plan,
 * next to the same run under a plan whose faults match nothing on the hot path. Every hook sits behind
 * one boolean that is false without a plan; the plan switches that flag on, so each submit and each
 * progress call walks the plan and finds nothing: if even that is within the noise, the check alone is.
 * Two measurements: in one process on one engine, which has far less scheduling noise, under three plans
 * (none; a kind no hot-path hook handles, so the hooks are entered and return at once; hot-path faults
 * that match nothing), and across processes (the comch benchmark's flood, plan from $SOFTDPU_FAULTS).
 * Runs alternate (no plan, plan, no plan, ...) so that drift on a shared machine hits both.
 */
import { count, median, msgRate, printTable, ratio, type Row, runNode, serverAndClient, withTempDir } from './lib.js';

const UNMATCHED = JSON.stringify({
  faults: [
    { kind: 'again', match: { ctx: 'no_such_context', task: 'send' }, probability: 0.5, count: 10 },
    { kind: 'crash', match: { ctx: 'no_such_context' } },
    { kind: 'stall', match: { ctx: 'no_such_context' } },
  ],
});
const RUNS = 5;

export async function faultsBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const n = count(500_000);
    const rate = (env: Record<string, string>) => serverAndClient<{ rate: number }>(['comch-peer', ['sink', String(n)]], ['comch-peer', ['flood', String(n)]], env, 'server');
    const none: number[] = [];
    const planned: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      none.push((await rate({ SOFTDPU_FABRIC: dir })).rate);
      planned.push((await rate({ SOFTDPU_FABRIC: dir, SOFTDPU_FAULTS: UNMATCHED })).rate);
    }
    const [a, b] = [median(none), median(planned)];
    const inproc = { none: [] as number[], other_kind: [] as number[], unmatched: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      for (const [plan, rates] of Object.entries(inproc)) rates.push(JSON.parse(await runNode('faults-peer', [plan, String(count(200_000)), '5'], 0, { SOFTDPU_FABRIC: dir })).rate);
    }
    const [c, d, e] = [median(inproc.none), median(inproc.other_kind), median(inproc.unmatched)];
    const rows: Row[] = [
      { what: `one-way rate, one process, busy (${count(200_000)} msgs x 5, per CPU second, median of ${RUNS} processes)`, softdpu: `${msgRate(c)} (no plan)`, reference: `${msgRate(d)} (plan of another kind: hooks on, return at once)`, ratio: ratio(c / d) },
      { what: '  same, vs hot-path faults that match nothing', softdpu: `${msgRate(c)} (no plan)`, reference: `${msgRate(e)} (again + stall on a context that does not exist)`, ratio: ratio(c / e) },
      { what: `one-way rate, two processes, busy (${n} msgs, median of ${RUNS})`, softdpu: `${msgRate(a)} (no plan)`, reference: `${msgRate(b)} (plan, nothing matches)`, ratio: ratio(a / b) },
      { what: '  spread of the runs (min - max)', softdpu: `${msgRate(Math.min(...none))} - ${msgRate(Math.max(...none))}`, reference: `${msgRate(Math.min(...planned))} - ${msgRate(Math.max(...planned))}`, ratio: '' },
    ];
    printTable('fault injection: what a plan costs the comch hot path (ratio = no plan / plan; 1.00x: no cost; > 1: the plan costs)', rows);
    return {
      cross_process: { count: n, runs: RUNS, no_plan_msgs_per_s: none, unmatched_plan_msgs_per_s: planned, ratio_no_plan_to_plan: a / b },
      in_process: { count: count(200_000), msgs_per_cpu_s: inproc, ratio_none_to_other_kind: c / d, ratio_none_to_unmatched: c / e },
    };
  });
}
