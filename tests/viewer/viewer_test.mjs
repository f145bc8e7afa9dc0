// `worldgen view` in a real browser: Debian's chromium, headless, driven over the DevTools
// protocol by puppeteer-core (npm; browsers cannot be downloaded here, so it drives the system one).
// Starts a worldgen-server (the docker/worlds worlds) and the viewer on loopback, checks what issue
// 23 asks of the page, and stops both.
//
//   node viewer_test.mjs WORLDGEN_SERVER WORLDGEN_CLI REPO_ROOT OUT_DIR          (ctest)
//   node viewer_test.mjs WORLDGEN_SERVER WORLDGEN_CLI REPO_ROOT OUT_DIR --bench  (bench/viewer_bench.sh)
//
// Prints one line per check; exits 1 at the first failure. Bounded: every wait has a timeout.
import {spawn, execFileSync} from 'node:child_process';
import {readFileSync, mkdtempSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const [serverBin, cliBin, root, outDir, mode] = process.argv.slice(2);
// Waits are multiplied by this (3 in an AddressSanitizer build, whose server blends ~5x slower).
const SLOW = Number(process.env.WORLDGEN_TIMEOUT_FACTOR || 1);
const children = [];
let browser;

function fail(message) {
  console.error(`FAIL: ${message}`);
  throw new Error(message);
}
function check(ok, message) {
  if (!ok) fail(message);
  console.log(`ok: ${message}`);
}

// Starts `bin args` and resolves with the first match of `pattern` in its output.
function start(bin, args, pattern) {
  const child = spawn(bin, args, {stdio: ['ignore', 'pipe', 'pipe']});
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin} did not start: ${output}`)), 15000);
    const onData = (data) => {
      output += data;
      const m = output.match(pattern);
      if (m) { clearTimeout(timer); resolve({child, match: m}); }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${bin} exited ${code}: ${output}`)));
  });
}

// A world whose biome names are markup (world files are the studio's, but a page must not run
// what they hold): step 11.
const MARKUP_BIOMES = ['<img src=x onerror="window.__markup=1">', '<b>bold</b>'];
let worldConfig = path.join(root, 'docker/worlds');

async function startServer(port) {
  const {child, match} = await start(
      serverBin, ['--listen_address=127.0.0.1', `--port=${port}`, '--metrics_port=0',
                  `--world_config=${worldConfig}`],
      /listening on (127\.0\.0\.1:(\d+))/);
  return {child, target: match[1], port: Number(match[2])};
}

function cli(target, args) {
  return execFileSync(cliBin, [`--target=${target}`, ...args], {timeout: 30000}).toString();
}

// Waits until fn(arg) is true on the page; on timeout fails, with what `explain()` says if given.
async function waitFor(page, fn, arg, what, timeout = 20000, explain = null) {
  try {
    await page.waitForFunction(fn, {timeout: timeout * SLOW, polling: 50}, arg);
  } catch (e) {
    fail(`timed out waiting for ${what}${explain ? ': ' + (await explain()) : ''}`);
  }
}

// True once pane `i`'s tile layer has tiles and none is still loading or striped (a 503's error
// tile, 32 pixels wide).
function tilesSettled(i) {
  const pane = window.worldgenViewer && window.worldgenViewer.panes[i];
  if (!pane || !pane.tiles) return false;
  const imgs = [...pane.map.getContainer().querySelectorAll('img.leaflet-tile')];
  return imgs.length > 0 && !pane.tiles._loading &&
         imgs.every((img) => img.complete && img.classList.contains('leaflet-tile-loaded') &&
                             img.naturalWidth === 256);
}

// True once the sampling-points overlay has its current tiles, each drawn or saying why not.
function pointTilesSettled() {
  const layer = window.worldgenViewer && window.worldgenViewer.panes[0].grids.points;
  if (!layer || layer._loading) return false;
  const tiles = Object.values(layer._tiles).filter((t) => t.current);
  return tiles.length > 0 &&
         tiles.every((t) => t.el.dataset.points !== undefined || t.el.dataset.note !== undefined);
}

// RGBA bytes of an image (an <img> on the page matching `selector`, or a data URL), via a canvas.
async function pixels(page, {selector, dataUrl}) {
  return page.evaluate(async ({selector, dataUrl}) => {
    let img = selector ? document.querySelector(selector) : new Image();
    if (!selector) {
      img.src = dataUrl;
      await img.decode();
    }
    if (!img) return null;
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    return Array.from(ctx.getImageData(0, 0, c.width, c.height).data);
  }, {selector, dataUrl});
}

async function setView(page, x, z, zoom) {
  await page.evaluate(({x, z, zoom}) => window.worldgenViewer.panes[0].map.setView([z, x], zoom,
                                                                                    {animate: false}),
                      {x, z, zoom});
}

async function run() {
  const work = mkdtempSync(path.join(tmpdir(), 'worldgen-viewer-'));
  const markup = path.join(work, 'markup.json');
  writeFileSync(markup, JSON.stringify({
    name: 'markup', seed: '5',
    biomes: [{id: 0, name: MARKUP_BIOMES[0]}, {id: 1, name: MARKUP_BIOMES[1], temperature: 0.5}]}));
  worldConfig = `${worldConfig},${markup}`;
  let server = await startServer(0);
  const {match: viewMatch} = await start(
      cliBin, [`--target=${server.target}`, '--retries=1', `--deadline_ms=${20000 * SLOW}`, 'view',
               '--listen=127.0.0.1:0'],
      /(http:\/\/127\.0\.0\.1:\d+)\//);
  const base = viewMatch[1];
  console.log(`server ${server.target}, viewer ${base}`);

  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    protocolTimeout: 60000,
  });
  const page = await browser.newPage();
  // The test's view is small (fewer tiles per screen); the benchmark's is a desktop's.
  await page.setViewport(mode === '--bench' ? {width: 1200, height: 800} : {width: 900, height: 600});
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`); });

  if (mode === '--bench') return bench(page, base, server);

  // 1. The page loads, tiles at three zoom levels, no console errors.
  await page.goto(`${base}/#w=default&l=dominant&x=128&z=128&zoom=0`, {waitUntil: 'load'});
  await waitFor(page, () => window.worldgenViewer && window.worldgenViewer.ready, null, 'the page');
  for (const zoom of [0, -2, -4]) {
    await setView(page, 128, 128, zoom);
    await waitFor(page, tilesSettled, 0, `tiles at zoom ${zoom}`);
    const srcs = await page.$$eval('#map img.leaflet-tile-loaded', (imgs) => imgs.map((i) => i.src));
    check(srcs.length > 0 && srcs.every((s) => s.includes(`/tiles/default/dominant/${zoom}/`)),
          `zoom ${zoom}: ${srcs.length} tiles loaded, all of zoom ${zoom}`);
  }
  check(errors.length === 0, `no console errors (${errors.join(' | ')})`);

  // 2. A zoom-0 tile is `worldgen render`'s PNG of the same region, pixel for pixel (and byte for
  // byte as served).
  await setView(page, 128, 128, 0);
  await waitFor(page, tilesSettled, 0, 'tiles at zoom 0');
  const rendered = path.join(work, 'render.png');
  cli(server.target, ['render', '--region=0,0,255,255', '--layer=dominant', `--out=${rendered}`]);
  const renderBytes = readFileSync(rendered);
  const tileSelector = '#map img.leaflet-tile-loaded[src*="/tiles/default/dominant/0/0/0.png"]';
  const tilePixels = await pixels(page, {selector: tileSelector});
  const renderPixels =
      await pixels(page, {dataUrl: `data:image/png;base64,${renderBytes.toString('base64')}`});
  check(tilePixels && tilePixels.length === 256 * 256 * 4 &&
            tilePixels.every((v, i) => v === renderPixels[i]),
        'tile 0/0/0 shows the pixels of `worldgen render --region=0,0,255,255`');
  const served = Buffer.from(await (await fetch(`${base}/tiles/default/dominant/0/0/0.png`)).arrayBuffer());
  check(served.equals(renderBytes), 'and is the same PNG file');

  // 3. The hover readout at a pixel is SampleWeights at that block. Zoomed in to 4 pixels per block
  // (zoom 0 tiles enlarged), so that the pointer lands inside the block whatever the rounding.
  // A block on a border (two or more weights): the first of a grid of candidates.
  const grid = [];
  for (let z = 37; z < 1024; z += 100) for (let x = 0; x < 1024; x += 16) grid.push([x, z]);
  const candidates = JSON.parse(cli(server.target, ['sample', '--json', ...grid.flat().map(String)]))
                         .samples;
  const border = candidates.findIndex((s) => s.weights.length >= 2);
  check(border >= 0, `a border block: (${grid[border]})`);
  const [bx, bz] = grid[border];
  await setView(page, bx, bz, 2);
  await waitFor(page, tilesSettled, 0, 'tiles at zoom 2');
  const at = await page.evaluate(({bx, bz}) => {
    const map = window.worldgenViewer.panes[0].map;
    const p = map.latLngToContainerPoint([bz + 0.5, bx + 0.5]);
    const box = map.getContainer().getBoundingClientRect();
    return {x: Math.round(box.left + p.x), y: Math.round(box.top + p.y)};
  }, {bx, bz});
  await page.mouse.move(at.x, at.y);
  await waitFor(page, ({bx, bz}) => {
    const r = document.getElementById('readout');
    return r.dataset.x === String(bx) && r.dataset.z === String(bz);
  }, {bx, bz}, 'the readout', 20000, async () => page.$eval('#readout', (r) => r.textContent));
  const shown = JSON.parse(await page.$eval('#readout', (r) => r.dataset.sample));
  const sampled = JSON.parse(cli(server.target, ['sample', '--json', '--source_biome', String(bx),
                                                 String(bz)])).samples[0];
  check(JSON.stringify(shown) === JSON.stringify(sampled),
        `readout at block (${bx}, ${bz}) equals \`worldgen sample\` there: ${JSON.stringify(shown)}`);
  const text = await page.$eval('#readout', (r) => r.textContent);
  check(text.includes(`block (${bx}, ${bz})`) && text.includes(`chunk (${Math.floor(bx / 16)}, ${Math.floor(bz / 16)})`) &&
            text.includes('source '),
        'readout names block, chunk and source biome');

  // 3b. The sampling-points overlay: each point /api/points lists for a shown overlay tile is a dot
  // of its biome's colour at its position, and the link remembers the overlay; zoomed out below 3
  // pixels between points, the tiles ask for nothing and say so.
  await page.click('#sampling-points');
  await waitFor(page, pointTilesSettled, null, 'the sampling-points overlay');
  const dots = await page.evaluate(async () => {
    const viewer = window.worldgenViewer, layer = viewer.panes[0].grids.points;
    const world = document.getElementById('world').value;
    const colours = new Map(viewer.biomes(world).map((b) => [b.id, b.color || {}]));
    let checked = 0;
    const wrong = [];
    for (const {el, coords, current} of Object.values(layer._tiles)) {
      if (!current) continue;
      const scale = 2 ** coords.z, span = 256 / scale;
      const x0 = coords.x * span, z0 = coords.y * span;
      const body = await (await fetch(`/api/points?world=${world}&min_x=${x0}&min_z=${z0}` +
                                      `&max_x=${x0 + span}&max_z=${z0 + span}`)).json();
      if (Number(el.dataset.points) !== body.points.length) wrong.push(`count ${el.dataset.points}`);
      const data = el.getContext('2d').getImageData(0, 0, 256, 256).data;
      for (const [x, z, id] of body.points) {
        const k = (Math.floor((z - z0) * scale) * 256 + Math.floor((x - x0) * scale)) * 4;
        const c = colours.get(id);
        if (data[k] !== (c.r || 0) || data[k + 1] !== (c.g || 0) || data[k + 2] !== (c.b || 0) ||
            data[k + 3] !== 255) {
          wrong.push(`(${x}, ${z}) biome ${id}: ${[...data.slice(k, k + 4)]}`);
        }
        ++checked;
      }
    }
    return {checked, wrong: wrong.slice(0, 3), hash: location.hash};
  });
  check(dots.checked >= 20 && dots.wrong.length === 0 && dots.hash.includes('pts=1'),
        `sampling points: ${dots.checked} dots, each its biome's colour where /api/points puts it` +
        (dots.wrong.length ? ` (wrong: ${dots.wrong.join('; ')})` : ''));
  await setView(page, bx, bz, -4);
  await waitFor(page, pointTilesSettled, null, 'the overlay zoomed out');
  const notes = await page.evaluate(() => Object.values(window.worldgenViewer.panes[0].grids.points._tiles)
                                              .filter((t) => t.current).map((t) => t.el.dataset.note));
  check(notes.length > 0 && notes.every((n) => n === 'zoom in to see the sampling points'),
        `zoomed out to 1:16 the overlay asks for nothing: "${notes[0]}"`);
  await page.click('#sampling-points');
  await setView(page, bx, bz, 0);

  // 4. Switching world changes the tiles.
  await page.select('#world', 'archipelago');
  await waitFor(page, tilesSettled, 0, 'archipelago tiles');
  const other = await pixels(page, {
    selector: '#map img.leaflet-tile-loaded[src*="/tiles/archipelago/dominant/0/0/0.png"]'});
  check(other && other.some((v, i) => v !== tilePixels[i]), 'switching world changes the tiles');

  // 5. Reloading the URL restores the view.
  await page.select('#layer', 'blend');
  await setView(page, 300, -200, -2);
  await waitFor(page, () => location.hash.includes('zoom=-2') && location.hash.includes('l=blend'),
                null, 'the URL to follow the view');
  const url = page.url();
  await page.reload({waitUntil: 'load'});
  await waitFor(page, () => window.worldgenViewer && window.worldgenViewer.ready, null, 'reload');
  const restored = await page.evaluate(() => {
    const map = window.worldgenViewer.panes[0].map;
    return {world: document.getElementById('world').value,
            layer: document.getElementById('layer').value, zoom: map.getZoom(),
            x: map.getCenter().lng, z: map.getCenter().lat, url: location.href};
  });
  check(restored.world === 'archipelago' && restored.layer === 'blend' && restored.zoom === -2 &&
            Math.abs(restored.x - 300) <= 4 && Math.abs(restored.z + 200) <= 4 &&
            restored.url === url,
        `reloading ${url} restores the view ${JSON.stringify(restored)}`);

  // 6. Side by side: the two maps pan and zoom together.
  await page.click('#compare');
  await page.select('#world2', 'default');
  await waitFor(page, tilesSettled, 1, 'the second map');
  await page.evaluate(() => window.worldgenViewer.panes[0].map.panBy([300, 150], {animate: false}));
  await page.evaluate(() => window.worldgenViewer.panes[1].map.setZoom(-3, {animate: false}));
  const both = await page.evaluate(() => window.worldgenViewer.panes.map((p) => ({
    x: p.map.getCenter().lng, z: p.map.getCenter().lat, zoom: p.map.getZoom()})));
  check(both[0].zoom === -3 && both[1].zoom === -3 && Math.abs(both[0].x - both[1].x) < 1 &&
            Math.abs(both[0].z - both[1].z) < 1 && Math.abs(both[0].x - 300) > 100,
        `side by side pans and zooms together ${JSON.stringify(both)}`);
  await waitFor(page, tilesSettled, 0, 'tiles after the pan');
  await waitFor(page, tilesSettled, 1, 'second map tiles after the pan');
  await new Promise((r) => setTimeout(r, 600));  // Leaflet's tile fade-in.
  const shot = path.join(outDir, 'viewer_screenshot.png');
  await page.screenshot({path: shot});
  console.log(`screenshot: ${shot}`);

  // 7. Export: the first map as one PNG of its size.
  const exported = await page.evaluate(() => {
    const c = window.worldgenViewer.exportCanvas();
    return {w: c.width, h: c.height, url: c.toDataURL('image/png').length};
  });
  const mapBox = await page.$eval('#map', (m) => [m.clientWidth, m.clientHeight]);
  check(exported.w === mapBox[0] && exported.h === mapBox[1] && exported.url > 10000,
        `export PNG: ${exported.w} x ${exported.h}`);
  check(errors.length === 0, `still no console errors (${errors.join(' | ')})`);

  // 8. The worldgen server goes away: error tiles and a message; it comes back: tiles again.
  server.child.kill('SIGKILL');
  const down = await fetch(`${base}/tiles/default/height/-1/5/5.png`);
  check(down.status === 503 && down.headers.get('content-type') === 'image/png' &&
            down.headers.get('x-worldgen-error'),
        `server down: tile answers 503 with an error tile (${down.headers.get('x-worldgen-error')})`);
  await page.evaluate(() => window.worldgenViewer.loadWorlds());
  await waitFor(page, () => document.getElementById('status').className === 'error', null,
                'the page to say the server is down');
  server = await startServer(server.port);
  await waitFor(page, () => document.getElementById('status').className === '', null,
                'the page to see the server back', 30000);
  const up = await fetch(`${base}/tiles/default/height/-1/5/5.png`);
  check(up.status === 200, 'server back: tiles answer 200 again, the page cleared its message');
  await waitFor(page, tilesSettled, 0, 'tiles reloaded after recovery');

  // 9. A short outage between two polls of the worlds: the tiles that failed meanwhile are reloaded
  // by the next poll, which never saw the server down.
  server.child.kill('SIGKILL');
  await page.evaluate(() => window.worldgenViewer.panes[0].map.panBy([700, 0], {animate: false}));
  await waitFor(page, () => document.getElementById('status').className === 'error', null,
                'the page to say tiles failed');
  server = await startServer(server.port);
  await waitFor(page, tilesSettled, 0, 'tiles that failed in a short outage reloaded', 30000);

  // 10. HTTP: HEAD is GET without the body, other methods get 405, a 304 carries no content
  // headers, and connections that send nothing do not hold the viewer's threads for long.
  const head = await fetch(`${base}/`, {method: 'HEAD'});
  check(head.status === 200 && Number(head.headers.get('content-length')) > 1000 &&
            (await head.text()) === '',
        `HEAD / answers as GET without the body (${head.status})`);
  const post = await fetch(`${base}/api/worlds`, {method: 'POST'});
  check(post.status === 405 && post.headers.get('allow') === 'GET, HEAD',
        `POST gets 405 naming GET and HEAD (${post.status})`);
  const tile = await fetch(`${base}/tiles/default/blend/0/0/0.png`);
  await tile.arrayBuffer();
  const again = await fetch(`${base}/tiles/default/blend/0/0/0.png`,
                            {headers: {'If-None-Match': `W/${tile.headers.get('etag')}`}});
  check(again.status === 304 && again.headers.get('content-length') === null &&
            again.headers.get('content-type') === null,
        `a weak If-None-Match gets 304 without content headers (${again.status})`);
  const port = Number(new URL(base).port);
  const idle = [];
  for (let i = 0; i < 16; ++i) idle.push(net.connect(port, '127.0.0.1'));
  await new Promise((r) => setTimeout(r, 300));
  const t0 = performance.now();
  // A connection of its own (fetch would reuse one a worker already holds).
  const answered = await new Promise((resolve, reject) => {
    const request = http.get({host: '127.0.0.1', port, path: '/viewer.js', agent: false},
                             (reply) => { reply.resume(); reply.on('end', () => resolve(reply)); });
    request.setTimeout(20000 * SLOW, () => request.destroy(new Error('no answer in 20 s')));
    request.on('error', reject);
  });
  for (const socket of idle) socket.destroy();
  check(answered.statusCode === 200, `16 idle connections held a request for ${
                                   Math.round(performance.now() - t0)} ms (under 20 s)`);

  // 11. Names from world files are text on the page: biome names that are markup show as those
  // characters and never become elements (or run).
  await page.select('#world', 'markup');
  await waitFor(page, () => document.querySelector('#legend b')?.textContent === 'markup', null,
                'the markup world\'s legend');
  const legendShows = await page.evaluate(() => ({
    text: document.getElementById('legend').textContent,
    elements: document.querySelectorAll('#legend img, #legend b').length,
    ran: window.__markup === 1}));
  check(MARKUP_BIOMES.every((name) => legendShows.text.includes(name)) &&
            legendShows.elements === 1 && !legendShows.ran,
        `biome names that are markup are shown as text (${JSON.stringify(legendShows)})`);
}

// Tile latency per zoom (cold: blocks nobody asked for yet; warm: the same tiles again), and the
// time from navigation to a full screen of tiles in the browser.
async function bench(page, base, server) {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)[1];
  console.log(`figure viewer: CPU ${cpu}; tiles of 256x256 pixels, fetched one at a time`);
  const pct = (v, p) => v[Math.min(v.length - 1, Math.floor(p * v.length))];
  let offset = 4;  // Tiles nobody asked for yet: each zoom its own 4 x 4 (within the world's bound).
  for (const zoom of [0, -2, -4, -6, -8]) {
    for (const pass of ['cold', 'warm']) {
      const ms = [];
      for (let i = 0; i < 16; ++i) {
        const t0 = performance.now();
        const r = await fetch(`${base}/tiles/default/dominant/${zoom}/${offset + (i % 4)}/${offset + (i >> 2)}.png`);
        await r.arrayBuffer();
        if (r.status !== 200) fail(`tile status ${r.status}`);
        ms.push(performance.now() - t0);
      }
      ms.sort((a, b) => a - b);
      console.log(`figure viewer tile zoom ${zoom} (1:${2 ** -zoom}) ${pass}: p50 ${pct(ms, 0.5).toFixed(1)} ms, p99 ${pct(ms, 0.99).toFixed(1)} ms`);
    }
    offset += 4;
  }
  for (const zoom of [0, -4]) {
    for (const pass of ['cold', 'warm']) {
      const x = 50000 + zoom * 1000;
      const t0 = Date.now();
      await page.goto(`${base}/?${pass}${zoom}#w=default&l=dominant&x=${x}&z=${x}&zoom=${zoom}`,
                      {waitUntil: 'load'});
      await waitFor(page, tilesSettled, 0, 'a full screen of tiles', 120000);
      const tiles = await page.$$eval('#map img.leaflet-tile-loaded', (i) => i.length);
      console.log(`figure viewer first full screen (1200x800, zoom ${zoom}, ${pass}): ${Date.now() - t0} ms for ${tiles} tiles`);
    }
  }
}

try {
  await run();
  console.log('viewer_browser_test: PASSED');
} catch (e) {
  console.error(e.stack || String(e));
  process.exitCode = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
  for (const c of children) c.kill('SIGKILL');
}
