/**
 * The `softdpu view` server without a browser: what it serves (the page, uPlot from the package, the
 * state, the event stream), what it refuses (other hosts and origins, bodies that are not JSON), the
 * fault controls (the fabric's plan, as `softdpu fault list` sees it), and its port when 7707 is taken.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { cliPath, runCli, spawnChild } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';

interface Answer {
  status: number;
  type: string;
  body: string;
}

/** One HTTP request with the headers given as they are (fetch would not send a Host of our choosing). */
function http(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  http(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

test('softdpu view serves the page, uPlot, the state and a stream; refuses other hosts, origins and non-JSON; adds and clears faults', { timeout: 20_000 }, async (t) => {
  const dir = tempFabricDir(t);
  const viewer = spawnChild(t, 'view', ['view', '--fabric', dir, '--port', '0', '--interval', '100'], { script: cliPath });
  const url = (await viewer.waitFor(/^softdpu view: (http:\/\/127\.0\.0\.1:(\d+)\/) +\(fabric \S+; listening on 127\.0\.0\.1 only/))[1]!;

  for (const [path, type, text] of [
    ['', 'text/html', '<title>softdpu view</title>'],
    ['app.js', 'text/javascript', "new EventSource('/api/events')"],
    ['draw.js', 'text/javascript', 'export function drawFabric'],
    ['style.css', 'text/css', '#drawing'],
    ['vendor/uPlot.iife.min.js', 'text/javascript', 'uPlot'],
    ['vendor/uPlot.min.css', 'text/css', '.uplot'],
  ] as const) {
    const res = await http(url + path);
    assert.equal(res.status, 200, path);
    assert.ok(res.type.startsWith(type), `${path}: ${res.type}`);
    assert.ok(res.body.includes(text), `${path} holds ${text}`);
  }
  assert.equal((await http(`${url}nothing`)).status, 404);
  const state = JSON.parse((await http(`${url}api/state`)).body) as { dir: string; rows: unknown[]; links: unknown[]; faults: { faults: unknown[] } };
  assert.deepEqual([state.rows, state.links, state.faults.faults], [[], [], []], 'an empty fabric: nothing to show');

  // The stream: a hello (the topology and what the server can do), then states at the interval.
  const events = await new Promise<string>((resolve, reject) => {
    const req = request(`${url}api/events`, (res) => {
      assert.equal(res.headers['content-type'], 'text/event-stream');
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        if ((text.match(/^event: state$/gm) ?? []).length >= 3) {
          req.destroy();
          resolve(text);
        }
      });
    });
    req.on('error', (err) => (err.message.includes('aborted') ? undefined : reject(err)));
    req.end();
  });
  const hello = JSON.parse(/^event: hello\ndata: (.*)$/m.exec(events)![1]!) as { topology: { devices: { pci: string }[] }; features: { faults: { kinds: string[] } } };
  assert.deepEqual(hello.topology.devices.map((d) => d.pci), ['0000:03:00.0', '0000:b1:00.0', '0000:b1:00.2', '0000:b1:00.3']);
  assert.ok(hello.features.faults.kinds.includes('crash'));

  const port = new URL(url).port;
  assert.equal((await http(`${url}api/state`, { headers: { host: `evil.example:${port}` } })).status, 421, 'another Host (DNS rebinding)');
  assert.equal((await http(`${url}api/state`, { headers: { host: `localhost:${port}` } })).status, 200, 'localhost is this host');
  assert.equal((await post(`${url}api/faults/clear`, {}, { origin: 'http://evil.example' })).status, 403, 'a POST from another site');
  assert.equal((await http(`${url}api/faults/clear`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' })).status, 415, 'a form post');

  const bad = await post(`${url}api/faults`, { kind: 'meltdown' }, { origin: url.slice(0, -1) });
  assert.equal(bad.status, 400);
  assert.match(JSON.parse(bad.body).error, /kind is "meltdown", not one of crash, /);
  const added = await post(`${url}api/faults`, { kind: 'again', match: { pid: 1 }, count: 1 }, { origin: url.slice(0, -1) });
  assert.equal(added.status, 200, added.body);
  const [id] = (JSON.parse(added.body) as { added: string[] }).added;
  const listed = JSON.parse((await runCli(t, ['fault', 'list', '--json', '--fabric', dir])).stdout) as { faults: { id: string; kind: string }[] };
  assert.deepEqual(listed.faults.map((f) => [f.id, f.kind]), [[id, 'again']], 'softdpu fault list sees what the page added');
  assert.deepEqual((JSON.parse((await http(`${url}api/state`)).body) as { faults: { faults: { id: string }[] } }).faults.faults.map((f) => f.id), [id]);
  const cleared = await post(`${url}api/faults/clear`, { ids: [id] });
  assert.deepEqual(JSON.parse(cleared.body), { removed: [id] });
  assert.deepEqual((JSON.parse((await runCli(t, ['fault', 'list', '--json', '--fabric', dir])).stdout) as { faults: unknown[] }).faults, []);

  viewer.kill('SIGINT');
  assert.deepEqual(await viewer.exited, { code: 0, signal: null }, 'Ctrl-C ends it cleanly');
});

test('softdpu view listens on 7707 by default, and on another port when 7707 is taken', { timeout: 20_000 }, async (t) => {
  const dir = tempFabricDir(t);
  // Take 7707 (unless something else already has it: taken all the same).
  const blocker = createServer();
  await new Promise<void>((resolve) => {
    blocker.once('error', () => resolve());
    blocker.listen(7707, '127.0.0.1', () => resolve());
  });
  t.after(() => blocker.close());
  const viewer = spawnChild(t, 'view', ['view', '--fabric', dir], { script: cliPath });
  const [, port] = await viewer.waitFor(/^softdpu view: http:\/\/127\.0\.0\.1:(\d+)\/ +\(port 7707 was taken; fabric /);
  assert.notEqual(port, '7707');
  assert.equal((await http(`http://127.0.0.1:${port}/api/state`)).status, 200);
  const explicit = await runCli(t, ['view', '--fabric', dir, '--port', '7707']);
  assert.equal(explicit.exit.code, 1, 'an explicit --port that is taken is an error');
  assert.match(explicit.stderr, /^softdpu view: cannot listen on 127\.0\.0\.1:7707: .*EADDRINUSE/);
});
