// worldgen view: the page. Leaflet map in block coordinates (x to the right, z downwards), tiles
// from /tiles (see client/viewer/map_viewer.h), readout from /api/sample, worlds from /api/worlds.
// The view's state lives in the URL's hash, so a link reopens the same view.
'use strict';

const TILE = 256;
const MIN_ZOOM = -8;  // 1:256, the server's coarsest tiles.
const MAX_ZOOM = 2;   // 4 pixels per block: zoom 0 tiles enlarged.

// One unit is one block; zoom 0 is one pixel per block; latitude is z, growing downwards.
const BlockCRS = L.extend({}, L.CRS.Simple, {transformation: new L.Transformation(1, 0, 1, 0)});

const $ = (id) => document.getElementById(id);
// tilesFailed: a tile came back striped (a 503: the server away, busy or past a deadline) since the
// last poll, which then reloads the tiles even if it never saw the server down.
const state = {worlds: new Map(), defaultWorld: '', serverDown: false, tilesFailed: false};
const panes = [];  // {map, tiles, world(), layer()}

function describe(name) { return state.worlds.get(name); }

function biomesOf(name) {
  const world = describe(name);
  return world ? world.description.config.biomes : [];
}

// The chunk side of a world: its configured chunk size (the server's default of 16 if unset).
function chunkSizeOf(name) {
  const world = describe(name);
  return (world && world.description.config.chunk_size) || 16;
}

// "dominant", "weight:3", "splat:0", ... from the layer selects.
function layerText(kind, arg) {
  return kind === 'weight' || kind === 'splat' ? `${kind}:${arg}` : kind;
}

function tileUrl(world, layer) {
  const version = describe(world) ? describe(world).version : '';
  return `/tiles/${encodeURIComponent(world)}/${layer}/{z}/{x}/{y}.png?v=${version}`;
}

// Leaflet layer for one world and layer. Splat textures come with chunks only: zoom 0 and closer.
function makeTiles(world, layer) {
  const tiles = L.tileLayer(tileUrl(world, layer), {
    tileSize: TILE, minZoom: layer.startsWith('splat') ? 0 : MIN_ZOOM, maxZoom: MAX_ZOOM,
    maxNativeZoom: 0, minNativeZoom: MIN_ZOOM, noWrap: true, keepBuffer: 1,
    className: 'worldgen-tiles',
  });
  // A 503's striped tile is smaller than a tile (kErrorTilePixels, map_viewer.h).
  tiles.on('tileload', (e) => {
    if (e.tile.naturalWidth === TILE) return;
    state.tilesFailed = true;
    setStatus('the worldgen server did not answer some tiles (striped); retrying them', true);
  });
  return tiles;
}

// Grid overlay drawn in the browser: lines every `step(zoom)` blocks, labelled if `labels`.
const GridLayer = L.GridLayer.extend({
  createTile(coords) {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = TILE;
    const ctx = canvas.getContext('2d');
    const scale = Math.pow(2, coords.z);  // pixels per block
    const step = this.options.step(coords.z);
    if (!step) return canvas;
    const x0 = coords.x * TILE / scale, z0 = coords.y * TILE / scale;
    ctx.strokeStyle = this.options.color;
    ctx.fillStyle = '#fff';
    ctx.font = '11px monospace';
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let b = Math.ceil(x0 / step) * step; b < x0 + TILE / scale; b += step) {
      const p = Math.round((b - x0) * scale) + 0.5;
      ctx.moveTo(p, 0); ctx.lineTo(p, TILE);
      if (this.options.labels) ctx.fillText(`x ${b}`, p + 3, 12);
    }
    for (let b = Math.ceil(z0 / step) * step; b < z0 + TILE / scale; b += step) {
      const p = Math.round((b - z0) * scale) + 0.5;
      ctx.moveTo(0, p); ctx.lineTo(TILE, p);
      if (this.options.labels) ctx.fillText(`z ${b}`, 3, p - 3);
    }
    ctx.stroke();
    return canvas;
  },
});

function chunkGrid(pane) {
  return new GridLayer({
    color: 'rgba(255,255,255,0.45)', minZoom: MIN_ZOOM, maxZoom: MAX_ZOOM,
    // Chunk borders while they are at least 8 pixels apart.
    step: (z) => (chunkSizeOf(pane.world()) * Math.pow(2, z) >= 8 ? chunkSizeOf(pane.world()) : 0),
  });
}

function coordGrid() {
  return new GridLayer({
    color: 'rgba(255,255,0,0.6)', labels: true, minZoom: MIN_ZOOM, maxZoom: MAX_ZOOM,
    // A power of two of blocks that is about 128 pixels or more.
    step: (z) => Math.pow(2, Math.max(0, Math.ceil(Math.log2(128 / Math.pow(2, z))))),
  });
}

// About how far apart the world's sampling points are, in blocks (0: its blender has none).
function samplingSpacing(name) {
  const world = describe(name);
  const area = world && world.description.blocks_per_sampling_point;
  return area ? Math.sqrt(area) : 0;
}

// The blender's sampling points (/api/points), one request per tile, each a dot in its biome's
// colour, while they are at least 3 pixels apart (zoomed out further the tiles stay empty and say
// why in their data-note).
const PointsLayer = L.GridLayer.extend({
  createTile(coords, done) {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = TILE;
    const scale = Math.pow(2, coords.z);  // pixels per block
    const world = this.options.world, spacing = samplingSpacing(world);
    if (spacing * scale < 3) {
      canvas.dataset.note = spacing ? 'zoom in to see the sampling points' :
                                      `the ${describe(world).description.blender} blender has no sampling points`;
      setTimeout(() => done(null, canvas), 0);
      return canvas;
    }
    const x0 = coords.x * TILE / scale, z0 = coords.y * TILE / scale, span = TILE / scale;
    const version = describe(world) ? describe(world).version : '';
    const url = `/api/points?world=${encodeURIComponent(world)}&min_x=${x0}&min_z=${z0}` +
                `&max_x=${x0 + span}&max_z=${z0 + span}&v=${version}`;
    fetch(url).then(async (reply) => {
      const body = await reply.json();
      if (!reply.ok) {
        canvas.dataset.note = body.error;
        done(null, canvas);
        return;
      }
      const colours = new Map(biomesOf(world).map((b) => {
        const c = b.color || {};
        return [b.id, `rgb(${c.r || 0},${c.g || 0},${c.b || 0})`];
      }));
      // Dots about a quarter of the points' mean spacing, 1 to 4 pixels in radius.
      const n = body.points.length;
      const radius = Math.min(4, Math.max(1, Math.sqrt(TILE * TILE / Math.max(n, 1)) / 4));
      const ctx = canvas.getContext('2d');
      ctx.strokeStyle = '#000';
      ctx.lineWidth = radius > 1.5 ? 1 : 0.5;
      for (const [x, z, id] of body.points) {
        ctx.beginPath();
        ctx.arc((x - x0) * scale, (z - z0) * scale, radius, 0, 2 * Math.PI);
        ctx.fillStyle = colours.get(id) || '#fff';
        ctx.fill();
        ctx.stroke();
      }
      canvas.dataset.points = String(n);
      done(null, canvas);
    }).catch((e) => done(e, canvas));
    return canvas;
  },
});

function samplingPoints(pane) {
  return new PointsLayer({world: pane.world(), minZoom: MIN_ZOOM, maxZoom: MAX_ZOOM,
                          className: 'worldgen-points'});
}

// ---- the URL's hash: w, l, x, z, zoom, grid, coords, pts, cmp, l2 ----
function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  return Object.fromEntries(params.entries());
}

function writeHash() {
  const map = panes[0].map;
  const c = map.getCenter();
  const params = new URLSearchParams({
    w: $('world').value, l: layerText($('layer').value, $('layer-arg').value),
    x: Math.round(c.lng), z: Math.round(c.lat), zoom: map.getZoom(),
  });
  if ($('chunk-grid').checked) params.set('grid', '1');
  if ($('coord-grid').checked) params.set('coords', '1');
  if ($('sampling-points').checked) params.set('pts', '1');
  if ($('compare').checked) {
    params.set('cmp', $('world2').value);
    params.set('l2', $('layer2').value);
  }
  history.replaceState(null, '', '#' + params.toString());
}

// ---- controls ----
function fillWorldSelect(select, selected) {
  select.replaceChildren(...[...state.worlds.keys()].map((name) => new Option(name, name)));
  select.value = state.worlds.has(selected) ? selected : state.defaultWorld;
}

function fillLayerArg() {
  const kind = $('layer').value, arg = $('layer-arg');
  const previous = arg.value;
  arg.hidden = kind !== 'weight' && kind !== 'splat';
  if (kind === 'weight') {
    arg.replaceChildren(...biomesOf($('world').value).map(
        (b) => new Option(`${b.name} (${b.id})`, String(b.id))));
  } else if (kind === 'splat') {
    const ids = describe($('world').value).description.splat_channel_biome_ids;
    const count = Math.ceil(ids.length / 4);
    arg.replaceChildren(...Array.from({length: count}, (_, t) => new Option(`texture ${t}`, t)));
  }
  if ([...arg.options].some((o) => o.value === previous)) arg.value = previous;
}

function fillLayer2(selected) {
  const options = ['dominant', 'blend', 'source', 'height'];
  $('layer2').replaceChildren(...options.map((o) => new Option(o, o)));
  $('layer2').value = options.includes(selected) ? selected : 'dominant';
}

// Built from nodes, never from HTML: names come from world files.
function legend() {
  const name = $('world').value, world = describe(name);
  if (!world) return;
  const d = world.description;
  const element = (tag, text) => {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const rows = d.config.biomes.map((b) => {
    const c = b.color || {};
    const swatch = element('span');
    swatch.className = 'swatch';
    swatch.style.background = `rgb(${c.r || 0},${c.g || 0},${c.b || 0})`;
    const row = element('div');
    row.append(swatch, `${b.name} `, element('small', `(${b.id})`));
    return row;
  });
  const figures = (d.blender_figures || []).map((f) => `${f.name} ${+f.value.toFixed(4)}`);
  $('legend').replaceChildren(element('b', name), `: ${d.blender}`, element('br'),
                              element('small', figures.join(', ')), element('hr'), ...rows);
}

function setStatus(text, error) {
  $('status').textContent = text;
  $('status').className = error ? 'error' : '';
}

// ---- the maps ----
function makePane(div, world, layer) {
  const map = L.map(div, {crs: BlockCRS, minZoom: MIN_ZOOM, maxZoom: MAX_ZOOM, zoomSnap: 1,
                          attributionControl: false});
  const pane = {map, world, layer, tiles: null, grids: {}};
  pane.refresh = () => {
    const url = tileUrl(pane.world(), pane.layer()), splat = pane.layer().startsWith('splat');
    if (pane.tiles && pane.splat === splat) {
      if (pane.tiles._url !== url) pane.tiles.setUrl(url);
      return;
    }
    if (pane.tiles) map.removeLayer(pane.tiles);
    pane.tiles = makeTiles(pane.world(), pane.layer()).addTo(map);
    pane.splat = splat;
  };
  panes.push(pane);
  return pane;
}

function setOverlay(pane, key, make, on) {
  if (on && !pane.grids[key]) pane.grids[key] = make().addTo(pane.map);
  if (!on && pane.grids[key]) {
    pane.map.removeLayer(pane.grids[key]);
    delete pane.grids[key];
  }
}

function applyOverlays() {
  const pane = panes[0];
  setOverlay(pane, 'chunk', () => chunkGrid(pane), $('chunk-grid').checked);
  setOverlay(pane, 'coord', coordGrid, $('coord-grid').checked);
  // The points belong to one world: made again when the world changes.
  if (pane.grids.points && pane.grids.points.options.world !== pane.world()) {
    setOverlay(pane, 'points', null, false);
  }
  setOverlay(pane, 'points', () => samplingPoints(pane), $('sampling-points').checked);
  if (pane.grids.chunk) pane.grids.chunk.redraw();
}

// Pan and zoom move both maps together.
let syncing = false;
function sync(from, to) {
  from.map.on('move zoomend', () => {
    if (syncing || to.map.getContainer().hidden) return;
    syncing = true;
    to.map.setView(from.map.getCenter(), from.map.getZoom(), {animate: false});
    syncing = false;
  });
}

// ---- hover readout ----
// One request at a time; the latest position waits for it. `world` is the hovered map's.
let hoverBusy = false, hoverNext = null;
async function hover(latlng, world) {
  const x = Math.floor(latlng.lng), z = Math.floor(latlng.lat);
  if (hoverBusy) { hoverNext = [latlng, world]; return; }
  hoverBusy = true;
  try {
    const reply = await fetch(`/api/sample?world=${encodeURIComponent(world)}&x=${x}&z=${z}`);
    const body = await reply.json();
    const readout = $('readout');
    if (!reply.ok) {
      readout.textContent = body.error;
    } else {
      const s = body.samples[0];
      const names = new Map(biomesOf(world).map((b) => [b.id, b.name]));
      const n = chunkSizeOf(world);
      const weights = [...s.weights].sort((a, b) => b.weight - a.weight);
      readout.textContent =
          `${world}: block (${x}, ${z})  chunk (${Math.floor(x / n)}, ${Math.floor(z / n)})\n` +
          `source ${names.get(s.source_biome)} (${s.source_biome})  height ${s.height.toFixed(2)}\n` +
          weights.map((w) => `${w.weight.toFixed(4)}  ${names.get(w.biome_id)} (${w.biome_id})`)
              .join('\n');
      readout.dataset.world = world;
      readout.dataset.x = x;
      readout.dataset.z = z;
      readout.dataset.sample = JSON.stringify(s);
    }
  } catch (e) {
    $('readout').textContent = `no answer: ${e}`;
  }
  hoverBusy = false;
  if (hoverNext) { const next = hoverNext; hoverNext = null; hover(...next); }
}

// ---- export: the visible tiles and overlays of the first map, as drawn, into one PNG ----
function exportCanvas() {
  const map = panes[0].map, box = map.getContainer().getBoundingClientRect();
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(box.width);
  canvas.height = Math.round(box.height);
  const ctx = canvas.getContext('2d');
  ctx.imageSmoothingEnabled = false;
  ctx.fillStyle = '#111';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  for (const el of map.getContainer().querySelectorAll('img.leaflet-tile-loaded, canvas.leaflet-tile')) {
    const r = el.getBoundingClientRect();
    ctx.drawImage(el, r.left - box.left, r.top - box.top, r.width, r.height);
  }
  return canvas;
}

function exportPng() {
  const link = document.createElement('a');
  const c = panes[0].map.getCenter();
  link.download = `worldgen-${$('world').value}-${Math.round(c.lng)}-${Math.round(c.lat)}.png`;
  link.href = exportCanvas().toDataURL('image/png');
  link.click();
}

// ---- worlds: loaded at start and every 5 s; tiles reload when a world changes or comes back ----
async function loadWorlds() {
  let body;
  try {
    const reply = await fetch('/api/worlds');
    body = await reply.json();
    if (!reply.ok) throw new Error(body.error);
  } catch (e) {
    state.serverDown = true;
    setStatus(`worldgen server not answering: ${e.message}`, true);
    return false;
  }
  const before = new Map([...state.worlds].map(([k, v]) => [k, v.version]));
  state.worlds = new Map(body.worlds.map((w) => [w.name, w]));
  state.defaultWorld = body.default;
  const changed = [...state.worlds].some(([k, v]) => before.get(k) !== v.version);
  const recovered = state.serverDown || state.tilesFailed;
  state.serverDown = false;
  state.tilesFailed = false;
  setStatus(`${body.target}: ${state.worlds.size} world(s)`, false);
  if (recovered || changed) {
    for (const pane of panes) {
      if (!pane.tiles) continue;
      pane.refresh();
      if (recovered) pane.tiles.redraw();
      if (pane.grids.points) pane.grids.points.redraw();
    }
  }
  return true;
}

async function main() {
  while (!(await loadWorlds())) await new Promise((r) => setTimeout(r, 2000));
  const hash = readHash();
  fillWorldSelect($('world'), hash.w);
  fillWorldSelect($('world2'), hash.cmp);
  const [kind, arg] = (hash.l || 'dominant').split(':');
  $('layer').value = [...$('layer').options].some((o) => o.value === kind) ? kind : 'dominant';
  fillLayerArg();
  if (arg !== undefined) $('layer-arg').value = arg;
  fillLayer2(hash.l2);
  $('chunk-grid').checked = hash.grid === '1';
  $('coord-grid').checked = hash.coords === '1';
  $('sampling-points').checked = hash.pts === '1';
  $('compare').checked = hash.cmp !== undefined;

  const main = makePane($('map'), () => $('world').value,
                        () => layerText($('layer').value, $('layer-arg').value));
  const side = makePane($('map2'), () => $('world2').value, () => $('layer2').value);
  const center = [Number(hash.z) || 0, Number(hash.x) || 0];
  const zoom = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, Number(hash.zoom) || 0));
  main.map.setView(center, zoom);
  main.refresh();
  sync(main, side);
  sync(side, main);
  const showSide = () => {
    $('map2').hidden = !$('compare').checked;
    main.map.invalidateSize();
    if (!$('map2').hidden) {
      side.map.invalidateSize();
      side.map.setView(main.map.getCenter(), main.map.getZoom(), {animate: false});
      side.refresh();
    }
  };
  showSide();
  applyOverlays();
  legend();

  main.map.on('moveend', writeHash);
  main.map.on('mousemove', (e) => hover(e.latlng, main.world()));
  side.map.on('mousemove', (e) => hover(e.latlng, side.world()));
  $('world').onchange = () => { fillLayerArg(); main.refresh(); legend(); applyOverlays(); writeHash(); };
  $('layer').onchange = () => { fillLayerArg(); main.refresh(); writeHash(); };
  $('layer-arg').onchange = () => { main.refresh(); writeHash(); };
  $('world2').onchange = () => { side.refresh(); writeHash(); };
  $('layer2').onchange = () => { side.refresh(); writeHash(); };
  $('compare').onchange = () => { showSide(); writeHash(); };
  $('chunk-grid').onchange = () => { applyOverlays(); writeHash(); };
  $('coord-grid').onchange = () => { applyOverlays(); writeHash(); };
  $('sampling-points').onchange = () => { applyOverlays(); writeHash(); };
  $('export').onclick = exportPng;
  $('goto').onsubmit = (e) => {
    e.preventDefault();
    const [x, z] = $('goto-text').value.split(/[ ,]+/).map(Number);
    if (Number.isFinite(x) && Number.isFinite(z)) main.map.setView([z, x], main.map.getZoom());
  };
  writeHash();
  setInterval(loadWorlds, 5000);
  // For scripts and tests: the maps and the export.
  window.worldgenViewer = {panes, exportCanvas, loadWorlds, biomes: biomesOf, ready: true};
}

main();
