// The drawing of the fabric: each DPU's Arm side on the left, the host functions it serves on the right,
// every process in the box of the device it opened, and one line per pair of processes that share comch
// connections, as wide as the messages per second that cross it.
import { si } from './format.js';

const SVG = 'http://www.w3.org/2000/svg';
const CHIP_H = 24;
const GAP = 6;
const HEAD = 24;

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** '0000:b1:00.0' -> 'b1:00.0': the domain is always 0000 here. */
export function shortPci(pci) {
  return pci.replace(/^0000:/, '');
}

/** Width of a link line for `rate` messages per second. */
export function lineWidth(rate) {
  return Math.min(18, 1.5 + 2.5 * Math.log10(1 + rate));
}

/** The processes (threads merged), each with the first device it opened. */
function processesOf(rows) {
  const byPid = new Map();
  for (const r of rows) {
    if (r.type !== 'process') continue;
    const p = byPid.get(r.pid) ?? { pid: r.pid, title: r.title, name: r.name, alive: false, exited: undefined, device: undefined };
    p.alive = p.alive || r.alive;
    p.exited = p.exited ?? r.exited;
    p.device = p.device ?? r.devices[0]?.pci;
    byPid.set(r.pid, p);
  }
  return [...byPid.values()];
}

/** Draws the fabric into `svg`. */
export function drawFabric(svg, topology, view) {
  const width = Math.max(480, svg.clientWidth || svg.parentElement.clientWidth || 640);
  svg.replaceChildren();
  const processes = processesOf(view.rows);
  const at = new Map(processes.filter((p) => p.device).map((p) => [p.device, []]));
  for (const p of processes) if (p.device && at.has(p.device)) at.get(p.device).push(p);
  const known = new Set(topology.devices.map((d) => d.pci));
  const others = processes.filter((p) => !p.device || !known.has(p.device));
  const colW = Math.round(width * 0.36);
  const leftX = 8;
  const rightX = width - colW - 8;
  const chips = new Map(); // pid -> { x, y, side }
  let y = 8;

  const deviceBox = (device, x, top, label) => {
    const procs = at.get(device.pci) ?? [];
    const h = HEAD + Math.max(1, procs.length) * (CHIP_H + GAP) + 4;
    svg.append(el('rect', { x, y: top, width: colW - 16, height: h, rx: 6, class: 'device' }));
    svg.append(el('text', { x: x + 8, y: top + 16, class: 'device-label' }, label));
    if (procs.length === 0) svg.append(el('text', { x: x + 12, y: top + HEAD + 15, class: 'empty' }, 'no process'));
    procs.forEach((p, i) => {
      const cy = top + HEAD + i * (CHIP_H + GAP);
      chip(p, x + 8, cy, colW - 32);
      chips.set(p.pid, { x: x + 8, y: cy + CHIP_H / 2, w: colW - 32, side: device.side });
    });
    return h;
  };

  const chip = (p, x, top, w) => {
    const gone = p.alive ? '' : p.exited !== undefined ? 'exited' : 'dead';
    const g = el('g', { class: `chip${gone ? ` dead ${gone}` : ''}`, 'data-pid': p.pid });
    g.append(el('rect', { x, y: top, width: w, height: CHIP_H, rx: 4 }));
    g.append(el('circle', { cx: x + 10, cy: top + CHIP_H / 2, r: 4 }));
    const title = `${p.pid}  ${p.name}${gone ? `  (${gone})` : ''}`;
    g.append(el('text', { x: x + 20, y: top + 16 }, title.length > 44 ? `${title.slice(0, 43)}…` : title));
    const why = { exited: ' (exited: shown for a while with its final counters)', dead: ' (dead: shown until a sweep)', '': '' }[gone];
    g.append(el('title', {}, `pid ${p.pid}: ${p.title}${why}`));
    svg.append(g);
  };

  for (const dpu of topology.dpus) {
    const arms = topology.devices.filter((d) => d.side === 'dpu' && d.dpu === dpu);
    const fns = topology.devices.filter((d) => d.side === 'host' && d.dpu === dpu);
    const top = y;
    const heights = (list) => list.reduce((n, d) => n + HEAD + Math.max(1, (at.get(d.pci) ?? []).length) * (CHIP_H + GAP) + 4 + GAP, 0);
    const h = Math.max(heights(arms), heights(fns)) + HEAD + 4;
    svg.append(el('rect', { x: leftX - 4, y: top, width: colW, height: h, rx: 8, class: 'dpu' }));
    svg.append(el('text', { x: leftX + 6, y: top + 17, class: 'box-label' }, `DPU ${dpu} (Arm)`));
    svg.append(el('rect', { x: rightX - 4, y: top, width: colW, height: h, rx: 8, class: 'host' }));
    svg.append(el('text', { x: rightX + 6, y: top + 17, class: 'box-label' }, `host (functions of ${dpu})`));
    let ly = top + HEAD + 4;
    for (const d of arms) ly += deviceBox(d, leftX + 4, ly, `${shortPci(d.pci)}  Arm`) + GAP;
    let ry = top + HEAD + 4;
    for (const d of fns) ry += deviceBox(d, rightX + 4, ry, `${shortPci(d.pci)}  ${d.funcType ?? ''}`) + GAP;
    // The emulated PCIe link between the two sides: a bus the connections cross.
    const midX = (leftX + colW + rightX) / 2 - 2;
    svg.append(el('text', { x: midX, y: top + 12, class: 'pcie-label', 'text-anchor': 'middle' }, 'PCIe'));
    svg.append(el('rect', { x: midX - 7, y: top + 18, width: 14, height: h - 22, rx: 7, class: 'pcie' }));
    y = top + h + 12;
  }

  if (others.length > 0) {
    const h = HEAD + Math.ceil(others.length / 2) * (CHIP_H + GAP) + 4;
    svg.append(el('rect', { x: leftX - 4, y, width: width - 8, height: h, rx: 8, class: 'other' }));
    svg.append(el('text', { x: leftX + 6, y: y + 17, class: 'box-label' }, 'processes without a device (observers, remote-net peers)'));
    others.forEach((p, i) => {
      const x = i % 2 === 0 ? leftX + 4 : rightX + 4;
      const cy = y + HEAD + Math.floor(i / 2) * (CHIP_H + GAP);
      chip(p, x, cy, colW - 24);
      chips.set(p.pid, { x, y: cy + CHIP_H / 2, w: colW - 24, side: 'other' });
    });
    y += h + 12;
  }

  for (const link of view.links) {
    const a = chips.get(link.a);
    const b = chips.get(link.b);
    if (!a || !b) continue;
    const [l, r] = a.x <= b.x ? [a, b] : [b, a];
    const x1 = l.x + l.w;
    const x2 = r.x;
    const bend = Math.max(40, (x2 - x1) / 2);
    const d = x2 > x1 ? `M${x1},${l.y} C${x1 + bend},${l.y} ${x2 - bend},${r.y} ${x2},${r.y}` : `M${l.x + l.w},${l.y} C${l.x + l.w + 60},${l.y} ${r.x + r.w + 60},${r.y} ${r.x + r.w},${r.y}`;
    const g = el('g', { class: `link${link.alive ? '' : ' dead'}`, 'data-link': link.key });
    g.append(el('path', { d, 'stroke-width': lineWidth(link.msgRate).toFixed(1) }));
    const label = `${si(link.msgRate)} msg/s · ${link.connections} conn`;
    const lx = x2 > x1 ? (x1 + x2) / 2 : r.x + r.w + 40;
    // Above the line where it crosses the bus, however it slopes.
    g.append(el('text', { x: lx, y: Math.min(l.y, r.y) - 5 - lineWidth(link.msgRate) / 2, 'text-anchor': 'middle', class: 'link-label' }, label));
    g.append(el('title', {}, `pids ${link.a} and ${link.b}: ${link.connections} connection(s), ${si(link.messages)} messages, ${si(link.msgRate)} msg/s, ${si(link.byteRate)} B/s`));
    svg.append(g);
  }
  svg.setAttribute('viewBox', `0 0 ${width} ${y}`);
  svg.setAttribute('height', String(y));
}
