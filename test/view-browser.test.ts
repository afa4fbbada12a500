/**
 * `softdpu view` in a real browser (Chromium, driven by playwright-core): on a fabric of two servers
 * and two clients (real processes) with live traffic, the page shows the connections, in the drawing
 * and the table, with counters that rise; it agrees with `softdpu top --once --json`; a client killed
 * with SIGKILL shows as a disconnect and a dead process, and disappears after `softdpu fabric clean`; a
 * sample pair that lives less than an interval shows, exited, with its burst in the charts, and leaves
 * their legend once its epitaphs go.
 * The page is saved as test-artifacts/view-live.png (with traffic) and test-artifacts/view.png (after the kill).
 *
 * Without Chromium the test is skipped, saying how to install it, except under CI=true (.ci/run), where
 * a browser test that skips would prove nothing: there it fails, naming the fix.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { FabricSnapshot } from '../src/fabric/stats-reader.js';
import { CHROMIUM, openPage, pageProblems, screenshot } from './helpers/browser.js';
import { type Child, cliPath, runCli, spawnChild, topJson } from './helpers/child.js';
import { tempFabricDir } from './helpers/fabric.js';
import { samplePair } from './helpers/observe.js';

const skip = existsSync(CHROMIUM) || process.env.CI === 'true' ? false : `no Chromium at ${CHROMIUM}: apt-get install chromium (or set SOFTDPU_CHROMIUM)`;

interface Seen {
  key: string;
  kind: string;
  name: string;
  alive: boolean;
  counters: Record<string, number>;
}

/** What `softdpu top --once --json` lists, as rows keyed like the page's. */
function rowsOfSnapshot(snap: FabricSnapshot): Seen[] {
  return snap.threads
    .flatMap((t) => [
      { key: `${t.pid}/${t.tid}`, kind: 'process', name: t.title, alive: t.alive, counters: {} },
      // The page lists an object that ended only in an exited thread (its epitaph).
      ...t.objects.filter((o) => t.exited !== undefined || !o.ended).map((o) => ({ key: `${t.pid}/${t.tid}/${o.slot}`, kind: o.kind, name: o.name, alive: t.alive, counters: o.counters })),
    ])
    .sort((a, b) => a.key.localeCompare(b.key));
}

// In-page code is written as strings: the project compiles without the DOM's types.

/** What the page's table shows. */
function rowsOfPage(page: Page): Promise<Seen[]> {
  return page.evaluate(`[...document.querySelectorAll('#objects tbody tr[data-key]')]
    .map((tr) => ({
      key: tr.dataset.key,
      kind: tr.dataset.kind,
      name: tr.children[2].getAttribute('title') ?? '',
      alive: tr.dataset.alive === 'true',
      counters: Object.fromEntries([...tr.querySelectorAll('.counter')].map((c) => [c.dataset.counter, Number(c.dataset.value)])),
    }))
    .sort((a, b) => a.key.localeCompare(b.key))`);
}

/**
 * Bound on every wait for the page: it only detects a hang. The page redraws every second, and on a
 * loaded 2-CPU machine a frame may take several; a bound of a few seconds failed there.
 */
const WAIT_MS = 30_000;

/** Waits until `expression` (evaluated in the page) is true. */
async function until(page: Page, expression: string, timeoutMs = WAIT_MS): Promise<void> {
  await page.waitForFunction(expression, undefined, { timeout: timeoutMs, polling: 50 });
}

/** In-page expression: the value of `counter` on the connection row of process `pid`. */
const counterOf = (pid: number, counter: string) =>
  `Number(document.querySelector('#objects tr[data-kind="connection"][data-pid="${pid}"] .counter[data-counter="${counter}"]')?.dataset.value)`;

/** In-page expression: the labels of the messages chart's legend. */
const legend = `[...document.querySelectorAll('#chart-msg .u-legend .u-label')].map((l) => l.textContent)`;
const pairKey = (a: Child, b: Child) => `${Math.min(a.pid, b.pid)}-${Math.max(a.pid, b.pid)}`;

test('softdpu view in Chromium: connections, rising counters, the state of top --once --json, a short-lived pair, a disconnect, the sweep', { timeout: 170_000, skip }, async (t) => {
  const dir = tempFabricDir(t);
  const env = { SOFTDPU_FABRIC: dir };
  const servers = ['b1:00.0', 'b1:00.2'].map((rep) => spawnChild(t, 'comch-server', [JSON.stringify({ name: 'view', rep })], { env }));
  await Promise.all(servers.map((s) => s.waitFor(/^started DOCA_SUCCESS/)));
  const clients = ['b1:00.0', 'b1:00.2'].map((dev) => spawnChild(t, 'comch-client', [JSON.stringify({ name: 'view', dev })], { env }));
  await Promise.all(clients.map((c) => c.waitFor(/^c0 state STARTING->RUNNING/)));
  const [killed, kept] = clients as [Child, Child];
  const [serverA, serverB] = servers as [Child, Child];

  const viewer = spawnChild(t, 'view', ['view', '--fabric', dir, '--port', '0', '--interval', '250'], { script: cliPath });
  const url = (await viewer.waitFor(/^softdpu view: (http:\/\/127\.0\.0\.1:\d+\/)/))[1]!;
  const page = await openPage(t);
  await page.goto(url);

  await t.test('the connections appear: both ends in the table, one line per pair in the drawing', async () => {
    await page.waitForSelector('#status.live', { timeout: WAIT_MS });
    await until(page, `document.querySelectorAll('#objects tr[data-kind="connection"]').length === 4`);
    for (const [server, client] of [[serverA, killed], [serverB, kept]] as const) {
      await page.waitForSelector(`#drawing g.link[data-link="${Math.min(server.pid, client.pid)}-${Math.max(server.pid, client.pid)}"]`, { timeout: WAIT_MS });
      assert.ok(await page.$(`#drawing g.chip[data-pid="${server.pid}"]`), `a chip for server ${server.pid}`);
      assert.ok(await page.$(`#drawing g.chip[data-pid="${client.pid}"]`), `a chip for client ${client.pid}`);
    }
    const peer = await page.$eval(`#objects tr[data-kind="connection"][data-pid="${killed.pid}"] .peer`, (el) => el.textContent ?? '');
    assert.match(peer, new RegExp(`↔ ${serverA.pid}\\b`));
  });

  await t.test('counters rise with the traffic, and the busy link is drawn wider', async (t) => {
    killed.send('burst 0 300 a');
    await killed.waitFor(/^c0 sent a299$/);
    await until(page, `${counterOf(killed.pid, 'sent_messages')} >= 300`);
    const first = (await page.evaluate(counterOf(killed.pid, 'sent_messages'))) as number;
    serverA.send('burst * 200 b');
    killed.send('burst 0 500 c');
    await killed.waitFor(/^c0 sent c499$/);
    await until(page, `${counterOf(killed.pid, 'sent_messages')} >= ${first + 500}`);
    assert.equal(await page.evaluate(counterOf(killed.pid, 'sent_messages')), first + 500);
    await until(page, `${counterOf(killed.pid, 'recv_messages')} >= 200`);
    // Sustained traffic on the other pair: its line widens (rate > 0) and the charts get points.
    const link = `${Math.min(serverB.pid, kept.pid)}-${Math.max(serverB.pid, kept.pid)}`;
    const pump = setInterval(() => kept.send('burst 0 200 p'), 100);
    try {
      await until(page, `Number(document.querySelector('#drawing g.link[data-link="${link}"] path')?.getAttribute('stroke-width')) > 3`);
      await until(page, `window.softdpu.history.filter((p) => (p.links['${link}']?.[0] ?? 0) > 0).length >= 6`);
      t.diagnostic(`screenshot with traffic: ${await screenshot(page, 'view-live.png')}`);
    } finally {
      clearInterval(pump);
    }
    assert.ok(await page.$('#chart-msg .uplot'), 'the messages chart is drawn');
  });

  await t.test('the page shows what softdpu top --once --json lists, counter for counter', async (t) => {
    // Let the traffic drain: after it, the two observers must agree exactly.
    kept.send('send 0 last');
    await serverB.waitFor(/ last$/);
    let top: Seen[] = [];
    let shown: Seen[] = [];
    for (let i = 0; i < 20; i++) {
      top = rowsOfSnapshot(await topJson(t, dir));
      await page.waitForTimeout(300); // a fresh frame of the page, taken after top's snapshot
      shown = await rowsOfPage(page);
      if (JSON.stringify(top) === JSON.stringify(shown)) break;
    }
    assert.deepEqual(shown, top);
    assert.deepEqual(
      [...new Set(top.map((r) => Number(r.key.split('/')[0])))].sort(),
      [...servers, ...clients].map((c) => c.pid).sort(),
      'every process of the fabric, and only them',
    );
  });

  await t.test('the fault controls add a fault to the fabric\'s plan (softdpu fault list sees it) and clear it', async (t) => {
    await page.selectOption('#fault-form select[name="kind"]', 'again');
    await page.fill('#fault-form input[name="fields"]', '{"match": {"pid": 1}, "count": 1}');
    await page.click('#fault-form button[type="submit"]');
    await until(page, `document.querySelector('#fault-result').textContent.startsWith('added ')`).catch(async (err: Error) => assert.fail(`${err.message}; the page says: ${await page.textContent('#fault-result')}`));
    const id = ((await page.textContent('#fault-result')) ?? '').replace('added ', '');
    await page.waitForSelector(`#faults tr[data-fault="${id}"]`, { timeout: WAIT_MS });
    const listed = JSON.parse((await runCli(t, ['fault', 'list', '--json', '--fabric', dir])).stdout) as { faults: { id: string; kind: string; match: unknown }[] };
    assert.deepEqual(listed.faults.map((f) => [f.id, f.kind, f.match]), [[id, 'again', { pid: 1 }]]);
    await page.fill('#fault-form input[name="fields"]', '{"match": ');
    await page.click('#fault-form button[type="submit"]');
    await until(page, `document.querySelector('#fault-result').classList.contains('error')`);
    await page.click(`#faults tr[data-fault="${id}"] button`);
    await until(page, `!document.querySelector('#faults tr[data-fault="${id}"]')`).catch(async (err: Error) =>
      assert.fail(`${err.message}; the page says: ${await page.textContent('#fault-result')}; its faults table: ${await page.textContent('#faults')}; softdpu fault list: ${(await runCli(t, ['fault', 'list', '--fabric', dir])).stdout}`),
    );
    assert.deepEqual((JSON.parse((await runCli(t, ['fault', 'list', '--json', '--fabric', dir])).stdout) as { faults: unknown[] }).faults, []);
  });

  let short: { server: Child; client: Child } | undefined;
  await t.test('a sample pair that lives less than an interval: exited, its final counters, its burst in the charts and their legend', async (t) => {
    short = await samplePair(t, dir);
    const { server, client } = short;
    for (const c of [server, client]) await page.waitForSelector(`#objects tr.process.exited[data-pid="${c.pid}"]`, { timeout: WAIT_MS });
    assert.equal(await page.evaluate(counterOf(client.pid, 'sent_messages')), 1);
    assert.equal(await page.textContent(`#objects tr.process[data-pid="${server.pid}"] td.state`), 'EXITED');
    assert.match((await page.textContent(`#drawing g.chip.exited[data-pid="${server.pid}"] text`)) ?? '', /comch_ctrl_path_server +\(exited\)$/);
    const key = pairKey(server, client);
    await until(page, `window.softdpu.history.some((p) => (p.links['${key}']?.[0] ?? 0) > 0)`);
    await until(page, `${legend}.includes('pids ${key.replace('-', ' ↔ ')}')`);
  });

  await t.test('a client killed with SIGKILL: a disconnect event, its process marked dead, then gone after the sweep', async (t) => {
    killed.kill('SIGKILL');
    await killed.exited;
    await page.waitForSelector(`#events li[data-kind="disconnect"][data-pid="${serverA.pid}"]`, { timeout: WAIT_MS });
    await page.waitForSelector(`#objects tr.process[data-pid="${killed.pid}"][data-alive="false"]`, { timeout: WAIT_MS });
    await page.waitForSelector(`#drawing g.chip.dead[data-pid="${killed.pid}"]`, { timeout: WAIT_MS });
    assert.equal(await page.$(`#objects tr[data-kind="connection"][data-pid="${serverA.pid}"]`), null, "the server's end of the connection is gone");
    const top = await topJson(t, dir);
    assert.deepEqual(top.threads.filter((th) => th.pid === killed.pid).map((th) => th.alive), [false], 'top lists it, dead');
    const path = await screenshot(page, 'view.png');
    t.diagnostic(`screenshot: ${path}`);
    process.stdout.write(`# softdpu view screenshot: ${path}\n`);

    const clean = await runCli(t, ['fabric', 'clean', '--fabric', dir]);
    assert.equal(clean.exit.code, 0, clean.stderr);
    assert.match(clean.stdout, new RegExp(`removed stats\\.${killed.pid}-`));
    await until(page, `!document.querySelector('#objects tr[data-pid="${killed.pid}"]') && !document.querySelector('#drawing g.chip[data-pid="${killed.pid}"]')`);
    const after = await topJson(t, dir);
    assert.deepEqual(after.threads.filter((th) => th.pid === killed.pid), [], 'top no longer lists it');
    // The sweep took the short pair's epitaphs too: both pairs leave the legend, the live one stays.
    const gone = [pairKey(serverA, killed), ...(short ? [pairKey(short.server, short.client)] : [])].map((k) => `pids ${k.replace('-', ' ↔ ')}`);
    await until(page, `!${legend}.some((l) => ${JSON.stringify(gone)}.includes(l))`);
    assert.ok(((await page.evaluate(legend)) as string[]).includes(`pids ${pairKey(serverB, kept).replace('-', ' ↔ ')}`), 'the live pair keeps its series');
  });

  assert.deepEqual(pageProblems(page), [], 'the page ran without errors');
});
