/**
 * `softdpu top`: the fabric's processes and their objects, one line each, refreshed every second like
 * `htop`, with rates from the counters and the latest events below; `q` quits. Processes that exited
 * stay a while, marked, with their final counters (their epitaphs: fabric/epitaphs.ts); dead ones
 * (killed) until a sweep (`softdpu fabric clean`, or any process joining the fabric) removes them.
 * `--once` prints one frame, from two looks ONCE_GAP_MS apart so that it has rates; `--json` prints the
 * observer's snapshot instead (one line per interval without `--once`). Only reads: an observer changes
 * nothing on the fabric.
 */
import { StatsObserver } from '../fabric/stats-reader.js';
import { bytes, counterText, si } from './format.js';
import { type FabricView, type ObjectRow, RateTracker, type Row } from './observe.js';

export interface TopOptions {
  dir: string;
  once: boolean;
  json: boolean;
  intervalMs: number;
}

const EVENTS_SHOWN = 6;
/** Between the two looks of `--once` (or the interval, if shorter): rates need two. */
export const ONCE_GAP_MS = 200;
/** Width for a terminal that reports none (0 columns: some CI ptys), and for output that is not one. */
const DEFAULT_WIDTH = 160;
const dim = (s: string) => `\x1b[2m${s}\x1b[22m`;
const bold = (s: string) => `\x1b[1m${s}\x1b[22m`;
const inverse = (s: string) => `\x1b[7m${s}\x1b[27m`;

/** Pads to the column; cuts only on a terminal (printed elsewhere, a line keeps everything it says). */
function fit(text: string, width: number, cut: boolean): string {
  return cut && text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text.padEnd(width);
}

function clock(ms: number, millis = false): string {
  const d = new Date(ms);
  const hms = [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  return millis ? `${hms}.${String(d.getMilliseconds()).padStart(3, '0')}` : hms;
}

/** Rates of an object: events per second (every counter but bytes) and bytes per second. */
function rateColumns(r: ObjectRow): [string, string] {
  const entries = Object.entries(r.rates);
  if (entries.length === 0) return ['', ''];
  const ops = entries.filter(([k]) => !k.endsWith('bytes')).reduce((n, [, v]) => n + v, 0);
  const b = entries.filter(([k]) => k.endsWith('bytes')).reduce((n, [, v]) => n + v, 0);
  return [si(ops), entries.some(([k]) => k.endsWith('bytes')) ? bytes(b) : ''];
}

function countersText(r: ObjectRow): string {
  const c = r.counters;
  if (r.kind === 'connection') {
    return `sent ${si(c.sent_messages ?? 0)} (${bytes(c.sent_bytes ?? 0)})  recv ${si(c.recv_messages ?? 0)} (${bytes(c.recv_bytes ?? 0)})`;
  }
  return Object.entries(c)
    .map(([k, v]) => `${k} ${counterText(k, v, r.kind)}`)
    .join('  ');
}

const HEAD = ['PID', 'KIND', 'NAME', 'STATE', 'RATE/S', 'BYTES/S', 'COUNTERS'];
const WIDTHS = [13, 16, 44, 9, 8, 10];

function line(cells: string[], cut: boolean): string {
  return cells.map((c, i) => (i < WIDTHS.length ? fit(c, WIDTHS[i]!, cut) : c)).join(' ');
}

/** An object's STATE: its own while its thread lives; `ended` or `at exit` in an epitaph; else `dead`. */
function objectState(r: ObjectRow): string {
  if (r.alive) return r.state;
  if (r.exited === undefined) return 'dead';
  return r.ended ? 'ended' : 'at exit';
}

function rowLine(r: Row, titles: Map<number, string>, cut: boolean): string {
  if (r.type === 'process') {
    const title = r.title || (r.alive ? '' : '(died before this observer looked: softdpu fabric clean removes it)');
    const state = r.alive ? 'alive' : r.exited !== undefined ? 'EXITED' : 'DEAD';
    const devices = r.devices.map((d) => d.pci).join(' ');
    const last = r.exited !== undefined ? `${devices}${devices ? '  ' : ''}exited ${clock(r.exited, true)}` : devices;
    return line([r.tid === r.pid ? String(r.pid) : `${r.pid}/${r.tid}`, 'process', title, state, '', '', last], cut);
  }
  const name = r.peer > 0 ? `${r.name} ↔ ${r.peer}${titles.has(r.peer) ? ` ${titles.get(r.peer)}` : ''}` : r.name;
  const [ops, b] = rateColumns(r);
  return line(['', `${'  '.repeat(r.depth + 1)}${r.kind}`, name, objectState(r), ops, b, countersText(r)], cut);
}

/** Over how long the rates were taken, or why there are none yet. */
function rateSpan(view: FabricView): string {
  return view.span > 0 ? `over ${Math.round(view.span * 1000)} ms` : '(rates need a second look)';
}

/** One frame of `softdpu top`, as lines; `interactive`: cut to the terminal's width, in color. */
export function renderTop(view: FabricView, options: { width: number; height?: number; interactive: boolean }): string[] {
  const { width, interactive } = options;
  const clip = (text: string) => (interactive ? text.slice(0, width) : text).trimEnd();
  const paint = (style: (s: string) => string, text: string) => (interactive ? style(clip(text)) : clip(text));
  const t = view.totals;
  const titles = new Map<number, string>();
  for (const r of view.rows) if (r.type === 'process' && !titles.has(r.pid)) titles.set(r.pid, r.name);
  const gone = [t.dead ? `${t.dead} dead` : '', t.exited ? `${t.exited} exited` : ''].filter(Boolean).join(', ');
  const summary =
    `softdpu top  ${view.dir}  ${clock(view.time)}  ${t.processes} process${t.processes === 1 ? '' : 'es'}${gone ? ` (${gone})` : ''}, ` +
    `${t.objects} object${t.objects === 1 ? '' : 's'}, ${t.connections} connection${t.connections === 1 ? '' : 's'}, ${si(t.msgRate)} msg/s, ${bytes(t.byteRate)}/s ${rateSpan(view)}` +
    (interactive ? '   q: quit' : '');
  const out = [paint(bold, summary), '', paint(inverse, fit(line(HEAD, interactive), interactive ? width : 0, interactive))];
  const body = view.rows.map((r) => {
    const text = rowLine(r, titles, interactive);
    return !r.alive ? paint(dim, text) : r.type === 'process' ? paint(bold, text) : clip(text);
  });
  const events = view.events.slice(-EVENTS_SHOWN).map((e) => clip(`${clock(e.time, true)}  ${String(e.pid).padEnd(7)} ${e.kind.padEnd(16)} ${e.text}`));
  const room = options.height === undefined ? body.length : Math.max(1, options.height - out.length - (events.length + 2));
  if (view.rows.length === 0) out.push(clip('(no process publishes on this fabric: start one, e.g. softdpu sample comch_ctrl_path_server)'));
  else if (body.length > room) out.push(...body.slice(0, room - 1), `... ${body.length - room + 1} more lines`);
  else out.push(...body);
  out.push('', paint(bold, 'RECENT EVENTS'), ...(events.length ? events : ['(none)']));
  return out;
}

/** Runs `softdpu top`; resolves with the exit code. */
export async function top(options: TopOptions): Promise<number> {
  const observer = new StatsObserver(options.dir);
  const rates = new RateTracker();
  const out = process.stdout;
  const width = () => out.columns || DEFAULT_WIDTH;
  if (options.once) {
    let snap = observer.snapshot();
    if (!options.json) {
      rates.update(snap);
      await new Promise((resolve) => setTimeout(resolve, Math.min(ONCE_GAP_MS, options.intervalMs)));
      snap = observer.snapshot();
    }
    observer.close();
    out.write(options.json ? `${JSON.stringify(snap, null, 2)}\n` : `${renderTop(rates.update(snap), { width: width(), interactive: false }).join('\n')}\n`);
    return 0;
  }
  const interactive = !options.json && out.isTTY === true;
  const stdin = process.stdin;
  return new Promise<number>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const frame = () => {
      const snap = observer.snapshot();
      if (options.json) {
        out.write(`${JSON.stringify(snap)}\n`);
        return;
      }
      const lines = renderTop(rates.update(snap), { width: width(), ...(interactive && out.rows ? { height: out.rows } : {}), interactive });
      if (interactive) out.write(`\x1b[H${lines.map((l) => `${l}\x1b[K`).join('\n')}\x1b[J`);
      else out.write(`${lines.join('\n')}\n\n`);
    };
    const quit = () => {
      clearInterval(timer);
      observer.close();
      if (interactive) out.write('\x1b[?25h\x1b[?1049l'); // the cursor and the screen as they were
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
      process.off('SIGINT', quit).off('SIGTERM', quit);
      out.off('resize', frame).off('error', quit);
      resolve(0);
    };
    if (interactive) out.write('\x1b[?1049h\x1b[?25l'); // an alternate screen, no cursor
    if (stdin.isTTY) {
      stdin.setRawMode(true);
      stdin.setEncoding('utf8').on('data', (key: string) => {
        // A chunk may hold several keys (typed fast, or pasted); Esc alone, not as the start of a sequence.
        if (/[qQ\x03]/.test(key) || key === '\x1b') quit();
      });
    }
    process.once('SIGINT', quit).once('SIGTERM', quit);
    out.on('resize', frame).on('error', quit); // EPIPE: whoever read `softdpu top --json` went away
    frame();
    timer = setInterval(frame, options.intervalMs);
  });
}
