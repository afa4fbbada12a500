// softdpu view: the page. One server-sent event stream (/api/events) brings a 'hello' (the topology,
// what the server can do, the charts' history) and then a 'state' every interval (the rows and links of
// `softdpu top`, the recent events, the fault plan). Plain JavaScript, no build step.
import { drawFabric, shortPci } from './draw.js';
import { bytes, counterText, si } from './format.js';

const $ = (id) => document.getElementById(id);
const MAX_SERIES = 6;
const COLORS = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#0891b2', '#dc2626', '#4b5563'];

let hello;
let state;
const history = [];
const charts = { keys: '', msg: undefined, bytes: undefined };

function clock(ms, millis) {
  const d = new Date(ms);
  const hms = [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  return millis ? `${hms}.${String(d.getMilliseconds()).padStart(3, '0')}` : hms;
}

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') node.className = v;
    else if (k.startsWith('data-')) node.setAttribute(k, String(v));
    else node[k] = v;
  }
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}


// ---- the objects table ----

// What a row's state column says: its own while its thread lives; in an exited one's epitaph, whether
// the object ended before the exit or was still there; a process killed without one is dead.
const processState = (r) => (r.alive ? 'alive' : r.exited !== undefined ? 'EXITED' : 'DEAD');
const objectState = (r) => (r.alive ? r.state : r.exited === undefined ? 'dead' : r.ended ? 'ended' : 'at exit');
const goneClass = (r) => (r.alive ? '' : r.exited !== undefined ? ' dead exited' : ' dead');

function renderObjects(view) {
  const titles = new Map();
  for (const r of view.rows) if (r.type === 'process' && !titles.has(r.pid)) titles.set(r.pid, r.name);
  const body = $('objects').tBodies[0];
  const rows = view.rows.map((r) => {
    if (r.type === 'process') {
      return h(
        'tr',
        { class: `process${goneClass(r)}`, 'data-key': r.key, 'data-kind': 'process', 'data-pid': r.pid, 'data-alive': r.alive, 'data-exited': r.exited ?? '' },
        h('td', {}, r.tid === r.pid ? String(r.pid) : `${r.pid}/${r.tid}`),
        h('td', {}, 'process'),
        h('td', { title: r.title }, r.title),
        h('td', { class: 'state', title: r.exited !== undefined ? `exited at ${clock(r.exited, true)}` : '' }, processState(r)),
        h('td'),
        h('td'),
        h('td', { class: 'devices' }, [r.devices.map((d) => `${shortPci(d.pci)} (${d.side})`).join(', '), r.exited !== undefined ? `exited ${clock(r.exited, true)}` : ''].filter(Boolean).join('  ')),
      );
    }
    const ops = Object.entries(r.rates).filter(([k]) => !k.endsWith('bytes')).reduce((n, [, v]) => n + v, 0);
    const hasBytes = Object.keys(r.rates).some((k) => k.endsWith('bytes'));
    const b = Object.entries(r.rates).filter(([k]) => k.endsWith('bytes')).reduce((n, [, v]) => n + v, 0);
    const counters = h(
      'td',
      { class: 'counters' },
      ...Object.entries(r.counters).map(([k, v]) => h('span', { class: 'counter', 'data-counter': k, 'data-value': v }, `${k} `, h('b', {}, counterText(k, v, r.kind)))),
    );
    const name = h('td', { class: 'name', title: r.name }, r.name);
    if (r.peer > 0) name.append(h('span', { class: 'peer' }, ` ↔ ${r.peer}${titles.has(r.peer) ? ` ${titles.get(r.peer)}` : ''}`));
    return h(
      'tr',
      { class: `object kind-${r.kind}${r.kind === 'fault' && r.counters.injected > 0 ? ' injected' : ''}${goneClass(r)}`, 'data-key': r.key, 'data-kind': r.kind, 'data-pid': r.pid, 'data-alive': r.alive, 'data-exited': r.exited ?? '' },
      h('td'),
      h('td', { class: 'kind', style: `padding-left: ${0.6 + 1.1 * (r.depth + 1)}em` }, r.kind),
      name,
      h('td', { class: 'state' }, objectState(r)),
      h('td', { class: 'num' }, Object.keys(r.rates).length ? si(ops) : ''),
      h('td', { class: 'num' }, hasBytes ? bytes(b) : ''),
      counters,
    );
  });
  if (rows.length === 0) rows.push(h('tr', { class: 'empty' }, h('td', { colSpan: 7 }, 'No process publishes on this fabric yet: start one (softdpu sample --list).')));
  body.replaceChildren(...rows);
}

// ---- events ----

function renderEvents(view) {
  const list = [...view.events].reverse().slice(0, 100).map((e) =>
    h('li', { class: `event ev-${e.kind}`, 'data-kind': e.kind, 'data-pid': e.pid }, h('time', {}, clock(e.time, true)), h('span', { class: 'pid' }, String(e.pid)), h('span', { class: 'badge' }, e.kind), h('span', { class: 'text' }, e.text)),
  );
  if (list.length === 0) list.push(h('li', { class: 'empty' }, 'No event yet.'));
  $('events').replaceChildren(...list);
}

// ---- charts (uPlot) ----

/**
 * The links to chart: of those the state still lists (a pair whose processes are gone, exited ones
 * after their epitaphs' retention, leaves the legend), the busiest over the history, at most MAX_SERIES.
 */
function chartKeys() {
  const listed = new Set((state?.links ?? []).map((l) => l.key));
  const totals = new Map();
  for (const p of history) for (const [k, [m]] of Object.entries(p.links)) if (listed.has(k)) totals.set(k, (totals.get(k) ?? 0) + m + 1e-9);
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, MAX_SERIES).map(([k]) => k).sort();
}

function chartData(keys, index) {
  return [history.map((p) => p.t), history.map((p) => (index === 0 ? p.msg : p.bytes)), ...keys.map((k) => history.map((p) => p.links[k]?.[index] ?? null))];
}

function makeChart(target, title, keys, index, format) {
  const width = Math.max(300, target.clientWidth || 420);
  const series = [
    {},
    { label: 'all', stroke: '#111827', width: 2, points: { show: false }, value: (_u, v) => (v == null ? '-' : format(v)) },
    ...keys.map((k, i) => ({ label: `pids ${k.replace('-', ' ↔ ')}`, stroke: COLORS[i % COLORS.length], width: 1.5, points: { show: false }, value: (_u, v) => (v == null ? '-' : format(v)) })),
  ];
  const opts = {
    title,
    width,
    height: 170,
    series,
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
    axes: [{}, { values: (_u, ticks) => ticks.map(format), size: 60 }],
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
  };
  target.replaceChildren();
  return new window.uPlot(opts, chartData(keys, index), target);
}

function renderCharts() {
  if (!window.uPlot) {
    $('charts-missing').hidden = false;
    return;
  }
  const keys = chartKeys();
  const id = keys.join(',');
  if (id !== charts.keys || !charts.msg) {
    charts.msg?.destroy();
    charts.bytes?.destroy();
    charts.msg = makeChart($('chart-msg'), 'messages per second', keys, 0, si);
    charts.bytes = makeChart($('chart-bytes'), 'bytes per second', keys, 1, bytes);
    charts.keys = id;
  } else {
    charts.msg.setData(chartData(keys, 0));
    charts.bytes.setData(chartData(keys, 1));
  }
  const span = history.length > 1 ? Math.round(history[history.length - 1].t - history[0].t) : 0;
  $('chart-span').textContent = span > 0 ? `the last ${span >= 120 ? `${Math.round(span / 60)} minutes` : `${span} s`}` : '';
}

// ---- faults ----

function post(path, body) {
  return fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (res) => {
    const answer = await res.json();
    if (!res.ok) throw new Error(answer.error ?? `HTTP ${res.status}`);
    return answer;
  });
}

// The plan's rows are kept from one state to the next (only their counts change in place), so that a
// click on a row's button is never lost to a redraw between the button's press and release.
const faultRows = new Map();

function faultRow(f) {
  const { id, kind, injections, source: _source, ...rest } = f;
  const shape = JSON.stringify([kind, rest]);
  let row = faultRows.get(id);
  if (!row || row.shape !== shape) {
    const clear = h('button', { type: 'button', textContent: 'clear' });
    clear.addEventListener('click', () => act(post('/api/faults/clear', { ids: [id] }), `removed ${id}`));
    const count = h('td', { class: 'num' });
    row = { shape, count, tr: h('tr', { 'data-fault': id }, h('td', {}, id), h('td', {}, kind), h('td', { class: 'mono' }, JSON.stringify(rest)), count, h('td', {}, clear)) };
    faultRows.set(id, row);
  }
  row.count.textContent = si(injections);
  return row.tr;
}

function renderFaults(listing) {
  const body = $('faults').tBodies[0];
  if (listing.error) {
    faultRows.clear();
    body.replaceChildren(h('tr', {}, h('td', { colSpan: 5, class: 'error' }, listing.error)));
    return;
  }
  const rows = listing.faults.map(faultRow);
  for (const id of [...faultRows.keys()]) if (!listing.faults.some((f) => f.id === id)) faultRows.delete(id);
  for (const p of listing.processes ?? []) {
    rows.push(h('tr', { class: 'own' }, h('td', {}, p.id), h('td', {}, p.kind), h('td', {}, `pid ${p.pid}'s own (from ${p.source})`), h('td', { class: 'num' }, si(p.injections)), h('td')));
  }
  if (rows.length === 0) rows.push(h('tr', { class: 'empty' }, h('td', { colSpan: 5 }, `No fault in the plan (generation ${listing.generation ?? 0}).`)));
  if (rows.length !== body.rows.length || rows.some((r, i) => r !== body.rows[i])) body.replaceChildren(...rows);
}

function act(promise, done) {
  $('fault-result').textContent = '…';
  $('fault-result').className = 'note';
  promise.then(
    (answer) => ($('fault-result').textContent = done ?? (typeof answer === 'string' ? answer : JSON.stringify(answer))),
    (err) => {
      $('fault-result').textContent = err.message;
      $('fault-result').className = 'note error';
    },
  );
}

function setUpFaults(features) {
  if (!features.faults) return;
  $('faults-panel').hidden = false;
  const select = $('fault-form').elements.kind;
  select.replaceChildren(...features.faults.kinds.map((k) => h('option', { value: k, textContent: k })));
  $('fault-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const form = ev.target;
    let fields = {};
    const text = form.elements.fields.value.trim();
    try {
      if (text) fields = JSON.parse(text);
    } catch (err) {
      act(Promise.reject(new Error(`the fields are not JSON: ${err.message}`)));
      return;
    }
    act(post('/api/faults', { ...fields, kind: select.value }).then((a) => `added ${a.added.join(', ')}`));
  });
  $('fault-clear-all').addEventListener('click', () => act(post('/api/faults/clear', {}).then((a) => `removed ${a.removed.join(', ') || 'nothing'}`)));
}

// ---- the whole page ----

function render() {
  if (!hello || !state) return;
  const t = state.totals;
  $('summary').textContent =
    `${t.processes} process${t.processes === 1 ? '' : 'es'}${t.dead || t.exited ? ` (${[t.dead ? `${t.dead} dead` : '', t.exited ? `${t.exited} exited` : ''].filter(Boolean).join(', ')})` : ''} · ${t.objects} objects · ` +
    `${t.connections} connection${t.connections === 1 ? '' : 's'} · ${si(t.msgRate)} msg/s · ${bytes(t.byteRate)}/s · ${clock(state.time)}`;
  drawFabric($('drawing'), hello.topology, state);
  renderObjects(state);
  renderEvents(state);
  renderCharts();
  if (hello.features.faults) renderFaults(state.faults);
  document.body.dataset.updated = String(state.time);
}

function connect() {
  const source = new EventSource('/api/events');
  const status = $('status');
  source.addEventListener('hello', (ev) => {
    const first = !hello;
    hello = JSON.parse(ev.data);
    history.splice(0, history.length, ...hello.history);
    charts.keys = '';
    $('fabric').textContent = `${hello.dir} · topology ${hello.topology.source}`;
    if (first) setUpFaults(hello.features);
  });
  source.addEventListener('state', (ev) => {
    state = JSON.parse(ev.data);
    if (history.length === 0 || history[history.length - 1].t !== state.point.t) history.push(state.point);
    if (history.length > 600) history.shift();
    status.textContent = 'live';
    status.className = 'status live';
    render();
  });
  source.addEventListener('error', () => {
    status.textContent = 'disconnected: retrying';
    status.className = 'status down';
  });
}

// For scripts and tests that drive the page: what it was sent, as it was sent.
window.softdpu = {
  get hello() {
    return hello;
  },
  get state() {
    return state;
  },
  history,
};

window.addEventListener('resize', () => {
  charts.keys = '';
  render();
});
connect();
