/**
 * `softdpu view`: a web page of the fabric, served on 127.0.0.1 only and updated live by server-sent
 * events. The server observes the fabric once per interval (fabric/stats-reader.ts), keeps the rates
 * of the last minutes for the charts, and sends every page the same state: the rows and links of
 * `softdpu top` (cli/observe.ts), the recent events and the fault plan. The page is plain files
 * (static/: no build step); uPlot is served from the package's own node_modules, never from a CDN.
 *
 *   GET  /                  the page (index.html, app.js, style.css)
 *   GET  /vendor/uPlot.*    the chart library
 *   GET  /api/state         the latest state (JSON); /api/events: the same as a stream (text/event-stream)
 *   POST /api/faults        add faults to the fabric's plan (body: a fault, an array, or a plan)
 *   POST /api/faults/clear  remove faults (body: { ids?: [...] }; none: every fault)
 *
 * A browser runs pages of other origins too: requests whose Host is not this server's address, and
 * POSTs whose Origin is another site's or whose body is not JSON, are refused.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DocaError } from '../../core/error.js';
import { type FaultListing, Faults } from '../../fabric/faults/api.js';
import { FAULT_EVENTS, FAULT_KINDS } from '../../fabric/faults/plan.js';
import { StatsObserver } from '../../fabric/stats-reader.js';
import type { Topology } from '../../fabric/topology.js';
import { type FabricView, RateTracker } from '../observe.js';

/** The port `softdpu view` tries first; when it is taken, any free one. */
export const DEFAULT_PORT = 7707;
/** How much history the charts get: ten minutes at one point a second. */
const HISTORY_POINTS = 600;
const MAX_BODY = 64 * 1024;

/** The page's files: src/cli/view/static in a checkout and in the installed package alike. */
const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'src', 'cli', 'view', 'static');
const STATIC: Record<string, string> = {
  '/': 'index.html',
  '/index.html': 'index.html',
  '/app.js': 'app.js',
  '/draw.js': 'draw.js',
  '/style.css': 'style.css',
};
/** Modules the page shares with the terminal, compiled beside this file (dist/src/cli/). */
const SHARED: Record<string, string> = { '/format.js': join(dirname(fileURLToPath(import.meta.url)), '..', 'format.js') };
const TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/** uPlot's files, from the dependency (undefined when it is not installed: the page then draws no charts). */
function vendorFiles(): Record<string, string> {
  try {
    const root = dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
    return { '/vendor/uPlot.iife.min.js': join(root, 'dist', 'uPlot.iife.min.js'), '/vendor/uPlot.min.css': join(root, 'dist', 'uPlot.min.css') };
  } catch {
    return {};
  }
}

/** One point of the charts: total and per-link rates at time `t` (seconds since the epoch). */
export interface HistoryPoint {
  t: number;
  msg: number;
  bytes: number;
  links: Record<string, [msgRate: number, byteRate: number]>;
}

export interface ViewState extends FabricView {
  point: HistoryPoint;
  /** The fabric's fault plan, or why it could not be read. */
  faults: FaultListing | { error: string };
}

export interface ViewOptions {
  dir: string;
  topology: Topology;
  /** 0: any free port; undefined: DEFAULT_PORT, else any free one. */
  port?: number;
  intervalMs?: number;
}

export class ViewServer {
  readonly url: string;

  private readonly observer: StatsObserver;
  private readonly rates = new RateTracker();
  private readonly history: HistoryPoint[] = [];
  private readonly clients = new Set<ServerResponse>();
  private readonly vendor = vendorFiles();
  private state: ViewState;
  private readonly timer: NodeJS.Timeout;
  private readonly hosts: Set<string>;

  private constructor(
    private readonly server: Server,
    private readonly options: Required<Omit<ViewOptions, 'port'>>,
    /** True when DEFAULT_PORT was taken and another was picked. */
    readonly fellBack: boolean,
  ) {
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}/`;
    this.hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
    this.observer = new StatsObserver(options.dir);
    this.state = this.observe();
    this.timer = setInterval(() => this.tick(), options.intervalMs);
    server.on('request', (req, res) => this.handle(req, res).catch((err: unknown) => reply(res, 500, { error: (err as Error).message })));
  }

  /** Listens on 127.0.0.1 and starts observing. */
  static async start(options: ViewOptions): Promise<ViewServer> {
    const server = createServer();
    server.keepAliveTimeout = 5000;
    const listen = (port: number) =>
      new Promise<void>((resolve, reject) => {
        const fail = (err: Error) => reject(err);
        server.once('error', fail);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', fail);
          resolve();
        });
      });
    let fellBack = false;
    try {
      await listen(options.port ?? DEFAULT_PORT);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (options.port !== undefined || code !== 'EADDRINUSE') {
        throw new DocaError(code === 'EADDRINUSE' ? 'IN_USE' : 'OPERATING_SYSTEM', 'softdpu view', `cannot listen on 127.0.0.1:${options.port ?? DEFAULT_PORT}: ${(err as Error).message}`);
      }
      await listen(0);
      fellBack = true;
    }
    return new ViewServer(server, { dir: options.dir, topology: options.topology, intervalMs: options.intervalMs ?? 1000 }, fellBack);
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    for (const res of this.clients) res.end();
    this.clients.clear();
    this.observer.close();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private observe(): ViewState {
    const view = this.rates.update(this.observer.snapshot());
    const links: HistoryPoint['links'] = {};
    for (const l of view.links) links[l.key] = [l.msgRate, l.byteRate];
    const point = { t: view.time / 1000, msg: view.totals.msgRate, bytes: view.totals.byteRate, links };
    this.history.push(point);
    if (this.history.length > HISTORY_POINTS) this.history.shift();
    return { ...view, point, faults: this.faults() };
  }

  private faults(): ViewState['faults'] {
    try {
      return Faults.list({ fabric: this.options.dir });
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  private tick(): void {
    this.state = this.observe();
    const message = `event: state\ndata: ${JSON.stringify(this.state)}\n\n`;
    for (const res of this.clients) res.write(message);
  }

  /** What a page needs once: the fabric's layout, what the server can do, the charts' history. */
  private hello(): object {
    const devices = this.options.topology.devices.map((d) => ({
      pci: d.pci.toString(),
      side: d.side,
      dpu: d.dpu,
      ...(d.funcType ? { funcType: d.funcType } : {}),
      representors: d.representors.map((r) => r.pci.toString()),
    }));
    return {
      dir: this.options.dir,
      topology: { source: this.options.topology.source, dpus: this.options.topology.dpus, devices },
      intervalMs: this.options.intervalMs,
      features: { charts: '/vendor/uPlot.iife.min.js' in this.vendor, faults: { kinds: FAULT_KINDS, events: FAULT_EVENTS } },
      history: this.history,
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: a page of another site that resolves its name to 127.0.0.1 still sends its own Host.
    if (!this.hosts.has(req.headers.host ?? '')) return reply(res, 421, { error: `this server answers to ${this.url} only` });
    const path = new URL(req.url ?? '/', this.url).pathname;
    if (req.method === 'GET' || req.method === 'HEAD') {
      if (path === '/api/state') return reply(res, 200, this.state);
      if (path === '/api/hello') return reply(res, 200, this.hello());
      if (path === '/api/events') return this.stream(res);
      const file = STATIC[path] ? join(STATIC_DIR, STATIC[path]) : (SHARED[path] ?? this.vendor[path]);
      if (file) return serveFile(res, file);
      return reply(res, 404, { error: `no ${path} here` });
    }
    if (req.method !== 'POST') return reply(res, 405, { error: `${req.method} is not served` });
    const origin = req.headers.origin;
    if (origin !== undefined && !this.hosts.has(origin.replace(/^http:\/\//, ''))) return reply(res, 403, { error: `requests from ${origin} are refused` });
    if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return reply(res, 415, { error: 'send JSON (Content-Type: application/json)' });
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch (err) {
      return reply(res, 400, { error: `the body is not JSON: ${(err as Error).message}` });
    }
    try {
      if (path === '/api/faults') {
        const added = Faults.add(body as Parameters<typeof Faults.add>[0], { fabric: this.options.dir });
        this.tick();
        return reply(res, 200, { added });
      }
      if (path === '/api/faults/clear') {
        const ids = (body as { ids?: unknown }).ids;
        if (ids !== undefined && !(Array.isArray(ids) && ids.every((id) => typeof id === 'string'))) return reply(res, 400, { error: 'ids must be an array of fault ids' });
        const removed = Faults.clear({ fabric: this.options.dir, ...(ids ? { ids: ids as string[] } : {}) });
        this.tick();
        return reply(res, 200, { removed });
      }
    } catch (err) {
      if (err instanceof DocaError) return reply(res, 400, { error: err.message, code: err.code });
      throw err;
    }
    return reply(res, 404, { error: `no ${path} here` });
  }

  private stream(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write(`retry: 1000\nevent: hello\ndata: ${JSON.stringify(this.hello())}\n\nevent: state\ndata: ${JSON.stringify(this.state)}\n\n`);
    this.clients.add(res);
    res.on('close', () => this.clients.delete(res));
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function serveFile(res: ServerResponse, file: string): void {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch (err) {
    return reply(res, 404, { error: `cannot read ${file}: ${(err as Error).message}` });
  }
  res.writeHead(200, { 'content-type': TYPES[file.split('.').pop()!] ?? 'application/octet-stream', 'cache-control': 'no-cache', 'content-length': data.length });
  res.end(data);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error(`more than ${MAX_BODY} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Runs `softdpu view` until SIGINT or SIGTERM; resolves with the exit code. */
export async function view(options: ViewOptions): Promise<number> {
  const server = await ViewServer.start(options);
  const taken = server.fellBack ? `port ${DEFAULT_PORT} was taken; ` : '';
  process.stdout.write(`softdpu view: ${server.url}  (${taken}fabric ${options.dir}; listening on 127.0.0.1 only; Ctrl-C stops)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve).once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}
