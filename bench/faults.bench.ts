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
import { count, median, printScenarios, QUICK, runNode, scenario, serverAndClient, withTempDir } from './lib.js';

const UNMATCHED = JSON.stringify({
  faults: [
    { kind: 'again', match: { ctx: 'no_such_context', task: 'send' }, probability: 0.5, count: 10 },
    { kind: 'crash', match: { ctx: 'no_such_context' } },
    { kind: 'stall', match: { ctx: 'no_such_context' } },
  ],
});

export async function faultsBench(): Promise<Record<string, unknown>> {
  return withTempDir(async (dir) => {
    const runs = QUICK ? 1 : 5;
    const n = count(500_000);
    const nIn = count(200_000);
    // Every run's rate, for the spread (the scenarios give the medians).
    const details: Record<string, number[]> = {};
    await scenario('rate_in_process', async () => {
      const rates = { none: [] as number[], other_kind: [] as number[], unmatched: [] as number[] };
      Object.assign(details, { in_process_none: rates.none, in_process_other_kind: rates.other_kind, in_process_unmatched: rates.unmatched });
      for (let i = 0; i < runs; i++) {
        for (const [plan, r] of Object.entries(rates)) r.push(JSON.parse(await runNode('faults-peer', [plan, String(nIn), '5'], 0, { SOFTDPU_FABRIC: dir })).rate);
      }
      return {
        title: `one-way rate, one process, busy, 64 B, per CPU second (x 5, median of ${runs} processes), no plan`,
        metric: 'msgs_per_s',
        count: nIn,
        unit: 'msgs',
        size_bytes: 64,
        softdpu_label: 'softdpu, no plan',
        softdpu: { msgs_per_s: median(rates.none) },
        baselines: {
          other_kind_plan: { label: 'plan of another kind: hooks on, return at once', msgs_per_s: median(rates.other_kind) },
          unmatched_plan: { label: 'again + stall on a context that does not exist', msgs_per_s: median(rates.unmatched) },
        },
      };
    });
    await scenario('rate_cross_process', async () => {
      const rate = (env: Record<string, string>) => serverAndClient<{ rate: number }>(['comch-peer', ['sink', String(n)]], ['comch-peer', ['flood', String(n)]], env, 'server');
      const none: number[] = [];
      const planned: number[] = [];
      Object.assign(details, { cross_process_none: none, cross_process_unmatched: planned });
      for (let i = 0; i < runs; i++) {
        none.push((await rate({ SOFTDPU_FABRIC: dir })).rate);
        planned.push((await rate({ SOFTDPU_FABRIC: dir, SOFTDPU_FAULTS: UNMATCHED })).rate);
      }
      return {
        title: `one-way rate, two processes, busy, 64 B (median of ${runs}), no plan`,
        metric: 'msgs_per_s',
        count: n,
        unit: 'msgs',
        size_bytes: 64,
        softdpu_label: 'softdpu, no plan',
        softdpu: { msgs_per_s: median(none) },
        baselines: { unmatched_plan: { label: 'plan, nothing matches', msgs_per_s: median(planned) } },
      };
    });
    printScenarios('fault injection: what a plan costs the comch hot path (ratio = no plan / plan; 1.00x: no cost; > 1: the plan costs)');
    return { msgs_per_s_of_every_run: details };
  });
}
