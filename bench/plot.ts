/**
 * `softdpu bench --plot FILE.svg|FILE.html`: the message-size sweeps of a run (latency and bandwidth
 * against message size, softdpu next to each baseline, log scales), each target drawn as a dashed line at
 * its limit (limit x the baseline, at every size that has the target) with the side that meets it
 * shaded; then every target of the run, met or missed. Hand-written SVG, no dependency; the HTML page is
 * the same SVG and a table of every scenario, nothing fetched.
 */
import type { BenchResult } from './run.js';
import { type Figure, figureCell, type FigureKey, formatFigure, type Metric, type Scenario, sizeLabel, type TargetResult } from './lib.js';

const WIDTH = 1100;
const FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif";
const SOFTDPU_COLOR = '#d62728';
/** A baseline keeps its colour from chart to chart: sockets blue, C limits grey, ... */
const COLORS: [RegExp, string][] = [
  [/^socket_batched/, '#17becf'],
  [/^socket/, '#1f77b4'],
  [/^c_futex$/, '#9467bd'],
  [/^c_eventfd/, '#8c564b'],
  [/^c_pipe/, '#e377c2'],
  [/^c(_|$)/, '#555555'],
  [/^zmq/, '#ff7f0e'],
  [/^buffer_copy/, '#bcbd22'],
];
const colorOf = (key: string, i: number) => (key === 'softdpu' ? SOFTDPU_COLOR : COLORS.find(([re]) => re.test(key))?.[1] ?? ['#7f7f7f', '#2ca02c', '#aec7e8'][i % 3]!);
const MET = '#2ca02c';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (x: number) => (Math.round(x * 10) / 10).toString();
const text = (x: number, y: number, s: string, attrs = '') => `<text x="${num(x)}" y="${num(y)}"${attrs ? ' ' + attrs : ''}>${esc(s)}</text>`;
const tick = (v: number) => (v >= 1000 ? `${+(v / 1000).toPrecision(3)}k` : `${+v.toPrecision(2)}`);

interface Series {
  key: string;
  label: string;
  color: string;
  points: [size: number, value: number][];
}

/** A target drawn on a sweep: limit x the baseline's figure at each size that has it. */
interface TargetLine {
  label: string;
  op: TargetResult['op'];
  points: [size: number, value: number][];
}

interface Sweep {
  id: string;
  title: string;
  metric: Metric;
  series: Series[];
  targets: TargetLine[];
}

const AXIS: Partial<Record<Metric, string>> = { p50_us: 'round trip, p50 (us)', gbps: 'bandwidth (GB/s)', msgs_per_s: 'messages/s' };

/** The sweeps of a run, in the order they ran: one series per contender, one line per target. */
export function sweeps(scenarios: Scenario[]): Sweep[] {
  const out = new Map<string, Sweep>();
  for (const s of scenarios) {
    if (!s.sweep || s.size_bytes === null) continue;
    let sweep = out.get(s.sweep.id);
    if (!sweep) out.set(s.sweep.id, (sweep = { id: s.sweep.id, title: s.sweep.title, metric: s.metric, series: [], targets: [] }));
    const add = (key: string, label: string, f: Figure) => {
      const v = f[s.metric as FigureKey];
      if (v === undefined || !(v > 0)) return;
      let series = sweep.series.find((x) => x.key === key);
      if (!series) sweep.series.push((series = { key, label, color: colorOf(key, sweep.series.length), points: [] }));
      series.points.push([s.size_bytes!, v]);
    };
    add('softdpu', 'softdpu', s.softdpu);
    for (const [key, b] of Object.entries(s.baselines)) add(key, b.label, b);
    for (const t of s.targets) {
      const base = t.of === undefined ? undefined : s.baselines[t.of];
      const v = base?.[s.metric as FigureKey];
      if (t.metric !== s.metric || v === undefined) continue;
      const label = `target: ${t.text}`;
      let line = sweep.targets.find((x) => x.label === label);
      if (!line) sweep.targets.push((line = { label, op: t.op, points: [] }));
      line.points.push([s.size_bytes!, v * t.limit]);
    }
  }
  return [...out.values()];
}

/** A log axis from the decade below `lo` to the decade above `hi`, with 1-2-5 ticks. */
function logAxis(lo: number, hi: number): { min: number; max: number; ticks: number[] } {
  const min = 10 ** Math.floor(Math.log10(lo));
  const max = 10 ** Math.ceil(Math.log10(hi * 1.0001));
  const ticks: number[] = [];
  for (let d = min; d < max * 1.0001; d *= 10) for (const m of [1, 2, 5]) if (d * m >= min && d * m <= max * 1.0001) ticks.push(d * m);
  return { min, max, ticks };
}

/** One sweep's chart at (x, y), `w` wide: the plot area, its legend below in `cols` columns. */
function chart(sweep: Sweep, x: number, y: number, w: number, cols: number): { svg: string; height: number } {
  const pad = { left: 56, top: 28, bottom: 40 };
  const pw = w - pad.left - 28;
  const ph = 250;
  const [px, py] = [x + pad.left, y + pad.top];
  const values = [...sweep.series.flatMap((s) => s.points.map((p) => p[1])), ...sweep.targets.flatMap((t) => t.points.map((p) => p[1]))];
  const sizes = [...new Set(sweep.series.flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  const ya = logAxis(Math.min(...values), Math.max(...values));
  const [x0, x1] = [Math.log2(sizes[0]!), Math.log2(sizes.at(-1)!)];
  const sx = (size: number) => px + (x1 === x0 ? pw / 2 : ((Math.log2(size) - x0) / (x1 - x0)) * pw);
  const sy = (v: number) => py + ph - ((Math.log10(v) - Math.log10(ya.min)) / (Math.log10(ya.max) - Math.log10(ya.min))) * ph;
  const clip = `clip-${sweep.id}`;
  const out: string[] = [`<g class="chart" id="${esc(sweep.id)}">`, text(x, y + 14, sweep.title, 'font-weight="600" font-size="14"')];
  out.push(`<clipPath id="${esc(clip)}"><rect x="${num(px)}" y="${num(py)}" width="${num(pw)}" height="${num(ph)}"/></clipPath>`);
  out.push(`<rect x="${num(px)}" y="${num(py)}" width="${num(pw)}" height="${num(ph)}" fill="none" stroke="#ccc"/>`);
  for (const t of ya.ticks) {
    out.push(`<line x1="${num(px)}" x2="${num(px + pw)}" y1="${num(sy(t))}" y2="${num(sy(t))}" stroke="#eee"/>`);
    out.push(text(px - 6, sy(t) + 4, tick(t), 'text-anchor="end" fill="#555"'));
  }
  for (const s of sizes) {
    out.push(`<line x1="${num(sx(s))}" x2="${num(sx(s))}" y1="${num(py)}" y2="${num(py + ph)}" stroke="#eee"/>`);
    out.push(text(sx(s), py + ph + 16, sizeLabel(s), 'text-anchor="middle" fill="#555"'));
  }
  out.push(text(px + pw / 2, py + ph + 34, 'message size (log scale)', 'text-anchor="middle" fill="#333"'));
  out.push(text(x + 14, py + ph / 2, `${AXIS[sweep.metric] ?? sweep.metric} (log scale)`, `text-anchor="middle" fill="#333" transform="rotate(-90 ${num(x + 14)} ${num(py + ph / 2)})"`));
  // Targets first, under the series: the side that meets it shaded, the limit dashed.
  for (const t of sweep.targets) {
    const pts = [...t.points].sort((a, b) => a[0] - b[0]);
    const xy = pts.length === 1 ? [[sx(pts[0]![0]) - 14, sy(pts[0]![1])], [sx(pts[0]![0]) + 14, sy(pts[0]![1])]] : pts.map(([s, v]) => [sx(s), sy(v)]);
    const edge = t.op === '>=' ? py : py + ph;
    const area = [...xy, [xy.at(-1)![0], edge], [xy[0]![0], edge]].map(([a, b]) => `${num(a!)},${num(b!)}`).join(' ');
    out.push(`<polygon points="${area}" fill="${MET}" fill-opacity="0.10" stroke="none" clip-path="url(#${esc(clip)})"/>`);
    out.push(`<polyline points="${xy.map(([a, b]) => `${num(a!)},${num(b!)}`).join(' ')}" fill="none" stroke="${MET}" stroke-width="1.5" stroke-dasharray="6 4"/>`);
  }
  for (const s of [...sweep.series].reverse()) {
    const pts = [...s.points].sort((a, b) => a[0] - b[0]);
    const width = s.key === 'softdpu' ? 2.5 : 1.5;
    if (pts.length > 1) out.push(`<polyline points="${pts.map(([a, b]) => `${num(sx(a))},${num(sy(b))}`).join(' ')}" fill="none" stroke="${s.color}" stroke-width="${width}"/>`);
    for (const [a, b] of pts) out.push(`<circle cx="${num(sx(a))}" cy="${num(sy(b))}" r="${s.key === 'softdpu' ? 3.5 : 2.5}" fill="${s.color}"><title>${esc(`${s.label}, ${sizeLabel(a)}: ${formatFigure(sweep.metric, b)}`)}</title></circle>`);
  }
  // The legend, below: contenders in `cols` columns, then a line per target.
  const rows = Math.ceil(sweep.series.length / cols);
  const top = py + ph + 52;
  sweep.series.forEach((s, i) => {
    const [lx, ly] = [px + Math.floor(i / rows) * (pw / cols), top + (i % rows) * 17];
    out.push(`<line x1="${num(lx)}" x2="${num(lx + 18)}" y1="${num(ly)}" y2="${num(ly)}" stroke="${s.color}" stroke-width="${s.key === 'softdpu' ? 2.5 : 1.5}"/>`);
    out.push(text(lx + 24, ly + 4, s.label, `class="series"${s.key === 'softdpu' ? ' font-weight="600"' : ''}`));
  });
  sweep.targets.forEach((t, i) => {
    const ly = top + (rows + i) * 17;
    out.push(`<rect x="${num(px)}" y="${num(ly - 6)}" width="18" height="12" fill="${MET}" fill-opacity="0.15"/>`);
    out.push(`<line x1="${num(px)}" x2="${num(px + 18)}" y1="${num(ly)}" y2="${num(ly)}" stroke="${MET}" stroke-width="1.5" stroke-dasharray="6 4"/>`);
    out.push(text(px + 24, ly + 4, `${t.label} (shaded: met)`, 'class="target"'));
  });
  out.push('</g>');
  return { svg: out.join('\n'), height: top - y + (rows + sweep.targets.length) * 17 };
}

/** Every target of the run: where softdpu's figure (or ratio) sits against its limit, met or missed. */
function scorecard(scenarios: Scenario[], y: number): { svg: string; height: number } {
  const rows = scenarios.flatMap((s) => s.targets.map((t) => ({ s, t })));
  const rowH = 18;
  const out = [`<g class="targets">`, text(20, y + 14, `Targets: ${rows.filter((r) => r.t.met).length} of ${rows.length} met in this run`, 'font-weight="600" font-size="14"')];
  // A log axis of value / limit from 1/10 to 10, the limit in the middle; the side that meets it shaded.
  const [ax, aw] = [560, 300];
  const top = y + 40;
  const sx = (q: number) => ax + ((Math.log10(Math.min(10, Math.max(0.1, q))) + 1) / 2) * aw;
  out.push(text(ax, top - 8, '0.1x', 'fill="#555" text-anchor="middle"'), text(ax + aw / 2, top - 8, 'limit', 'fill="#555" text-anchor="middle"'), text(ax + aw, top - 8, '10x', 'fill="#555" text-anchor="middle"'));
  rows.forEach(({ s, t }, i) => {
    const ry = top + i * rowH;
    const value = t.of === undefined ? formatFigure(t.metric, t.value) : `${t.value.toFixed(2)}x`;
    out.push(text(20, ry + 13, `${s.id}: ${t.text}${t.note ? ` (${t.note})` : ''}`, 'fill="#222"'));
    const good = t.op === '>=' ? [ax + aw / 2, aw / 2] : [ax, aw / 2];
    out.push(`<rect x="${num(good[0]!)}" y="${num(ry + 3)}" width="${num(good[1]!)}" height="${rowH - 6}" fill="${MET}" fill-opacity="0.10"/>`);
    out.push(`<line x1="${num(ax + aw / 2)}" x2="${num(ax + aw / 2)}" y1="${num(ry + 1)}" y2="${num(ry + rowH - 1)}" stroke="${MET}" stroke-dasharray="3 2"/>`);
    const color = t.met ? MET : SOFTDPU_COLOR;
    out.push(`<circle cx="${num(sx(t.value / t.limit))}" cy="${num(ry + rowH / 2)}" r="4" fill="${color}"/>`);
    out.push(text(ax + aw + 14, ry + 13, `${value}: ${t.met ? 'met' : 'MISSED'}`, `fill="${color}"`));
  });
  out.push('</g>');
  return { svg: out.join('\n'), height: 50 + rows.length * rowH };
}

/** The run's plot as a standalone SVG document. */
export function plotSvg(result: BenchResult): string {
  const all = sweeps(result.scenarios);
  const parts: string[] = [];
  const run = `${result.quick ? 'quick run (counts / 10, one run each)' : 'full run (median of 3 runs)'}, ${result.date.slice(0, 10)}, Node ${result.node}, ${result.cpus} cpus${result.pinned ? ', sides pinned' : ''}${result.filter ? `, --filter ${result.filter}` : ''}`;
  parts.push(text(20, 26, 'softdpu bench: softdpu next to what a Node user would pick and the C limit', 'font-weight="700" font-size="16"'));
  parts.push(text(20, 44, run, 'fill="#555"'));
  let y = 60;
  const latency = all.filter((s) => s.metric === 'p50_us');
  const other = all.filter((s) => s.metric !== 'p50_us');
  // Latency sweeps two a row; the others (more contenders) a row each.
  for (let i = 0; i < latency.length; i += 2) {
    const pair = latency.slice(i, i + 2);
    const w = pair.length === 2 ? WIDTH / 2 - 10 : WIDTH - 20;
    const charts = pair.map((s, j) => chart(s, 10 + j * (WIDTH / 2), y, w, pair.length === 2 ? 2 : 3));
    parts.push(...charts.map((c) => c.svg));
    y += Math.max(...charts.map((c) => c.height)) + 24;
  }
  for (const s of other) {
    const c = chart(s, 10, y, WIDTH - 20, 3);
    parts.push(c.svg);
    y += c.height + 24;
  }
  if (!all.length) {
    parts.push(text(20, y + 20, 'no message-size sweep in this run (fastpath and comch have them)', 'fill="#555"'));
    y += 40;
  }
  const card = scorecard(result.scenarios, y);
  parts.push(card.svg);
  y += card.height + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${num(y)}" viewBox="0 0 ${WIDTH} ${num(y)}" font-family="${esc(FONT)}" font-size="12">`,
    `<title>softdpu bench, ${esc(run)}</title>`,
    `<rect x="0" y="0" width="${WIDTH}" height="${num(y)}" fill="#fff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/** The run as one page: the plot, then every scenario (softdpu, each baseline and its ratio, targets). */
export function plotHtml(result: BenchResult): string {
  const rows = result.scenarios.map((s) => {
    const baselines = Object.entries(s.baselines)
      .map(([k, b]) => `${esc(b.label)}: ${esc(figureCell(s.metric, b))} (${(s.ratios[k]?.[s.metric] ?? NaN).toFixed(2)}x)`)
      .join('<br>');
    const targets = s.targets.map((t) => `<span class="${t.met ? 'met' : 'missed'}">${esc(t.text)}: ${t.met ? 'met' : 'MISSED'}</span>`).join('<br>');
    return `<tr><td>${esc(s.id)}</td><td>${esc(s.title)}</td><td>${s.count ?? ''}</td><td>${esc(figureCell(s.metric, s.softdpu))}</td><td>${baselines || '-'}</td><td>${targets}</td></tr>`;
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>softdpu bench</title>
<style>
body { font-family: ${FONT}; margin: 20px; color: #222; }
svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 13px; margin-top: 16px; }
td, th { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; }
.met { color: ${MET}; }
.missed { color: ${SOFTDPU_COLOR}; }
</style>
</head>
<body>
${plotSvg(result)}
<table>
<thead><tr><th>scenario</th><th>what</th><th>count</th><th>softdpu</th><th>baselines (ratio softdpu / baseline)</th><th>targets</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
</body>
</html>
`;
}
