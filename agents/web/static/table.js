// The table drawn as SVG, in the look of the rgb_array render
// (mtrain_env/mexican_train/render_image.py): same geometry, colours, pip layouts.
// drawTable(svg, table, opts) draws the JSON of agents/web/tables.py; it draws only what
// that JSON carries (a hand that is null is never drawn: the page does not have it).

const NS = "http://www.w3.org/2000/svg";
const WIDTH = 1280, MARGIN = 12, HEADER_H = 40, HALF = 24, LANE_H = 2 * HALF + 8;
const MEXICAN_LANE_H = 3 * HALF + 2 * Math.floor(HALF / 8) + 8, LANE_GAP = 8;
const PLATE_W = 176, STATION_W = 104, SPOKE_W = 26, HAND_HALF = 28, HAND_TITLE_H = 28;

const C = {
  felt: "rgb(28,84,52)", feltDark: "rgb(18,58,36)", lane: "rgb(36,100,64)", header: "rgb(14,38,24)",
  text: "rgb(244,240,226)", dim: "rgb(170,200,180)", ivory: "rgb(250,246,234)", edge: "rgb(70,62,50)",
  brass: "rgb(201,162,74)", turn: "rgb(255,214,0)", glowOpen: "rgb(255,150,30)",
  glowHead: "rgb(235,40,40)", playable: "rgb(90,230,110)", marker: "rgb(255,196,0)",
};
export const PIP_COLORS = [
  "#000000", "#1e88e5", "#2e7d32", "#d32f2f", "#794824", "#1a237e", "#c88c00", "#8e44ad",
  "#00796b", "#4a148c", "#e66400", "#212121", "#6e6e6e", "#d81b60", "#827717", "#00838f",
  "#880e4f", "#3949ab", "#4e342e",
];
const SEAT_COLORS = [
  "rgb(31,95,160)", "rgb(170,60,40)", "rgb(110,70,150)", "rgb(30,120,120)",
  "rgb(160,110,20)", "rgb(150,50,100)", "rgb(70,110,40)", "rgb(90,90,110)",
];
const STRIPES = ["rgb(0,104,71)", "rgb(245,245,245)", "rgb(206,17,38)"];
const GRID = {
  0: [], 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]],
  4: [[0, 0], [2, 0], [0, 2], [2, 2]], 5: [[0, 0], [2, 0], [1, 1], [0, 2], [2, 2]],
  6: [[0, 0], [1, 0], [2, 0], [0, 2], [1, 2], [2, 2]],
  7: [[0, 0], [1, 0], [2, 0], [1, 1], [0, 2], [1, 2], [2, 2]],
  8: [[0, 0], [1, 0], [2, 0], [0, 1], [2, 1], [0, 2], [1, 2], [2, 2]],
  9: [[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [2, 1], [0, 2], [1, 2], [2, 2]],
};

function el(name, attrs = {}, parent = null, text = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== null) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function label(parent, x, y, text, size, fill, anchor = "start", baseline = "hanging", weight = "normal") {
  return el("text", {
    x, y, "font-size": size, fill, "text-anchor": anchor, "dominant-baseline": baseline,
    "font-family": "DejaVu Sans, Verdana, sans-serif", "font-weight": weight,
  }, parent, text);
}

function half(g, x0, y0, side, v, vertical) {
  if (v > 9) {
    label(g, x0 + side / 2, y0 + side / 2 + 1, String(v), side * 0.6, PIP_COLORS[v], "middle", "central", "bold");
    return;
  }
  const r = side * 0.105;
  for (let [c, row] of GRID[v]) {
    if (vertical) [c, row] = [row, c];
    el("circle", { cx: x0 + side * (0.24 + 0.26 * c), cy: y0 + side * (0.24 + 0.26 * row), r, fill: PIP_COLORS[v] }, g);
  }
}

/** Tile a|b at (x, y): a on the left (on top if vertical), 2*side x side lying down. */
export function tile(parent, x, y, a, b, side, vertical = false) {
  const g = el("g", { class: "tile", transform: `translate(${x},${y})` }, parent);
  const w = vertical ? side : 2 * side, h = vertical ? 2 * side : side;
  const radius = Math.max(1, side / 6), edge = Math.max(1, side / 22);
  el("rect", { width: w, height: h, rx: radius, fill: C.edge }, g);
  el("rect", { x: edge, y: edge, width: w - 2 * edge, height: h - 2 * edge, rx: Math.max(1, radius - edge), fill: C.ivory }, g);
  const line = Math.max(1, side / 28);
  if (vertical) {
    el("rect", { x: side * 0.14, y: side - line / 2, width: side * 0.72, height: line, fill: C.edge }, g);
    half(g, 0, 0, side, a, true);
    half(g, 0, side, side, b, true);
  } else {
    el("rect", { x: side - line / 2, y: side * 0.14, width: line, height: side * 0.72, fill: C.edge }, g);
    half(g, 0, 0, side, a, false);
    half(g, side, 0, side, b, false);
  }
  return g;
}

function marker(parent, x, y, h) {
  // the marker token: a small locomotive (R10, R16, R17)
  const w = h * 1.5, u = h / 10, dark = "rgb(40,30,10)";
  const g = el("g", { class: "marker", transform: `translate(${x},${y})` }, parent);
  el("title", {}, g, "marker: this train is open to everyone");
  el("rect", { x: 0.2 * w, y: 3 * u, width: 0.8 * w - u, height: 4.6 * u, rx: u, fill: C.marker, stroke: dark, "stroke-width": 0.6 * u }, g);
  el("rect", { x: 0.55 * w, y: 0.6 * u, width: 0.45 * w - 1.5 * u, height: 2.8 * u, fill: C.marker, stroke: dark, "stroke-width": 0.6 * u }, g);
  el("rect", { x: 0.28 * w, y: 1.2 * u, width: 0.1 * w, height: 2 * u, fill: dark }, g);
  el("polygon", { points: `${0.2 * w},${4 * u} ${0.2 * w},${7.6 * u} 0,${7.6 * u}`, fill: dark }, g);
  for (const cx of [0.35 * w, 0.62 * w, 0.85 * w]) el("circle", { cx, cy: 8.3 * u, r: 1.3 * u, fill: dark }, g);
}

/** Largest tile size laying `count` tiles in a width x height box: [half, perRow, gap]. */
function fit(count, width, height, halfMax, extraRow = 0) {
  for (let h = halfMax; h > 3; h--) {
    const gap = Math.max(1, Math.floor(h / 8));
    const perRow = Math.max(1, Math.floor((width + gap) / (2 * h + gap)));
    const rows = Math.ceil(count / perRow);
    if (rows * h + (rows - 1) * (gap + extraRow) <= height) return [h, perRow, gap];
  }
  return [4, Math.max(1, Math.floor((width + 1) / 9)), 1];
}

const key = (t) => `${Math.min(t[0], t[1])}-${Math.max(t[0], t[1])}`;
const plural = (k, word) => `${k} ${word}${k === 1 ? "" : "s"}`;

/**
 * Draw `table` into `svg`.
 * opts.names: agent name per seat; opts.handSeats: seats whose hands the panel shows (in order);
 * opts.legal: the human's legal moves; opts.selected: selected tile key "a-b";
 * opts.onTile(key), opts.onTrain(train): click handlers; opts.lastMove: {tile, train} to outline.
 */
export function drawTable(svg, table, opts = {}) {
  const n = table.num_players;
  const names = opts.names || [];
  const legal = opts.legal || [];
  const byTile = new Map();
  for (const m of legal) if (m.kind === "play") {
    const k = key(m.tile);
    if (!byTile.has(k)) byTile.set(k, []);
    byTile.get(k).push(m);
  }
  const targets = new Map((byTile.get(opts.selected) || []).map((m) => [m.train, m]));
  const handSeats = (opts.handSeats || []).filter((q) => table.hands[q]);
  const handRows = handSeats.length;
  const rowHalf = handRows > 4 ? 14 : handRows > 1 ? 20 : HAND_HALF;

  const laneH = Array.from({ length: n + 1 }, (_, i) => (i < n ? LANE_H : MEXICAN_LANE_H));
  const lanesTop = MARGIN + HEADER_H + 10;
  const laneY = laneH.map((_, i) => lanesTop + laneH.slice(0, i).reduce((s, v) => s + v, 0) + i * LANE_GAP);
  const lanesBottom = laneY[n] + MEXICAN_LANE_H;
  const laneX = MARGIN + STATION_W + SPOKE_W, tilesX = laneX + PLATE_W + 10;
  const tilesW = WIDTH - MARGIN - 8 - tilesX;
  const handTop = lanesBottom + 12;
  const perHandRow = handRows > 1 ? 2 * rowHalf + 12 : 2 * (HAND_HALF + 10);
  const panelH = handRows > 1 ? 10 + handRows * perHandRow : HAND_TITLE_H + perHandRow + 22;
  const height = Math.ceil((handTop + panelH + MARGIN) / 16) * 16;

  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${height}`);
  el("rect", { width: WIDTH, height, fill: C.felt }, svg);
  el("rect", { width: WIDTH, height: MARGIN + HEADER_H, fill: C.header }, svg);

  // header
  const parts = [
    "MEXICAN TRAIN", `Round ${table.round + 1}/${table.rounds}`,
    `Engine ${table.engine}|${table.engine}${table.engine_placed ? "" : " (not found)"}`,
    `Phase: ${table.phase.replace("_", " ")}`, `Boneyard: ${table.boneyard}`,
  ];
  if (table.playing) parts.push(`To play: player_${table.current}`);
  label(svg, MARGIN + 8, MARGIN + HEADER_H / 2, parts.join("     "), 17, C.text, "start", "central").setAttribute("class", "header");
  label(svg, WIDTH - MARGIN - 6, MARGIN + HEADER_H / 2, `double-${table.max_pips}  |  ${n} players  |  ${table.rules} rules`, 12, C.dim, "end", "central");

  // the station (R5) and its spokes
  const sx1 = MARGIN + STATION_W, cyStation = (lanesTop + lanesBottom) / 2;
  el("rect", { x: MARGIN, y: lanesTop, width: STATION_W, height: lanesBottom - lanesTop, rx: 14, fill: C.feltDark, stroke: C.brass, "stroke-width": 2 }, svg);
  label(svg, MARGIN + STATION_W / 2, lanesTop + 8, "STATION", 12, C.brass, "middle");
  const engineHalf = Math.min(36, Math.floor((lanesBottom - 8 - lanesTop - 26) / 2));
  const ex = MARGIN + (STATION_W - engineHalf) / 2, ey = cyStation - engineHalf + 13;
  if (table.engine_placed) tile(svg, ex, ey, table.engine, table.engine, engineHalf, true);
  else {
    el("rect", { x: ex, y: ey, width: engineHalf, height: 2 * engineHalf, rx: 6, fill: "none", stroke: C.dim, "stroke-width": 2 }, svg);
    label(svg, ex + engineHalf / 2, ey + engineHalf, "?", 17, C.dim, "middle", "central");
  }
  const open = new Set(table.open_doubles);
  for (let t = 0; t <= n; t++) {
    const y = laneY[t], h = laneH[t], cy = y + h / 2;
    el("polyline", { points: `${sx1 - 8},${cyStation} ${sx1 + 8},${cy} ${laneX},${cy}`, fill: "none", stroke: C.brass, "stroke-width": 3 }, svg);
    const lane = el("g", { class: "lane", "data-train": t }, svg);
    const isTarget = targets.has(t);
    el("rect", { x: laneX, y, width: WIDTH - MARGIN - laneX, height: h, rx: 10, fill: C.lane,
      stroke: isTarget ? C.playable : "none", "stroke-width": isTarget ? 4 : 0 }, lane);
    if (isTarget) {
      lane.classList.add("target");
      lane.addEventListener("click", () => opts.onTrain && opts.onTrain(t));
    }
    plate(lane, t, y, h);
    trainTiles(lane, t, y, h, open.has(t), open.has(t) && t === table.next_double);
  }

  function plate(parent, t, y, h) {
    const g = el("g", { class: "plate" }, parent);
    if (t === n) {
      el("rect", { x: laneX, y, width: PLATE_W, height: h, rx: 10, fill: "rgb(60,60,60)" }, g);
      STRIPES.forEach((col, j) => el("rect", { x: laneX + 8 + 6 * j, y: y + 8, width: 5, height: h - 16, fill: col }, g));
      label(g, laneX + 34, y + 9, "Mexican", 17, C.text);
      label(g, laneX + 34, y + h - 22, "open to all", 12, C.dim);
      return;
    }
    el("rect", { x: laneX, y, width: PLATE_W, height: h, rx: 10, fill: SEAT_COLORS[t % SEAT_COLORS.length] }, g);
    label(g, laneX + 12, y + 9, `player_${t}`, 17, C.text);
    if (names[t]) {
      const name = names[t].length > 11 ? names[t].slice(0, 10) + "…" : names[t];
      label(g, laneX + PLATE_W - 10, y + LANE_H - 22, name, 12, C.dim, "end");
    }
    label(g, laneX + 12, y + LANE_H - 22, plural(table.hand_counts[t], "tile"), 12, C.text);
    if (table.rounds > 1) label(g, laneX + 90, y + 13, `${table.scores[t]} pts`, 11, C.text);
    if (table.markers[t]) marker(g, laneX + PLATE_W - 33 - 8, y + 7, 22);
    if (table.playing && t === table.current) {
      el("rect", { x: laneX - 2, y: y - 2, width: PLATE_W + 4, height: LANE_H + 4, rx: 11, fill: "none", stroke: C.turn, "stroke-width": 3 }, g);
      el("polygon", { points: `${laneX - 20},${y + LANE_H / 2 - 9} ${laneX - 20},${y + LANE_H / 2 + 9} ${laneX - 5},${y + LANE_H / 2}`, fill: C.turn }, g);
    }
  }

  function trainTiles(parent, t, y, laneHeight, openDouble, head) {
    const tiles = table.trains[t];
    if (!tiles.length) {
      label(parent, tilesX + 6, y + laneHeight / 2, "not started", 12, C.dim, "start", "central");
      return;
    }
    const [h, perRow, gap] = fit(tiles.length, tilesW, laneHeight - 6, HALF);
    const rows = Math.ceil(tiles.length / perRow);
    const y0 = y + Math.floor((laneHeight - rows * h - (rows - 1) * gap) / 2);
    let x = 0, ty = 0;
    tiles.forEach(([a, b], i) => {
      const r = Math.floor(i / perRow), c = i % perRow;
      x = tilesX + c * (2 * h + gap);
      ty = y0 + r * (h + gap);
      const last = i === tiles.length - 1;
      if (openDouble && last) el("rect", { x: x - 3, y: ty - 3, width: 2 * h + 6, height: h + 6, rx: 6, fill: head ? C.glowHead : C.glowOpen }, parent);
      const g = tile(parent, x, ty, a, b, h);
      if (last && opts.lastMove && opts.lastMove.train === t && key(opts.lastMove.tile) === key([a, b])) {
        el("rect", { x: -2, y: -2, width: 2 * h + 4, height: h + 4, rx: 5, fill: "none", stroke: C.turn, "stroke-width": 2.5 }, g);
      }
    });
    if (openDouble) {
      if (head) {
        el("circle", { cx: x + 2 * h, cy: ty, r: 8, fill: C.glowHead, stroke: C.text }, parent);
        label(parent, x + 2 * h, ty + 1, "!", 12, C.text, "middle", "central");
      }
      const text = head ? "satisfy next!" : "open double";
      const tx = x + 2 * h + 12, w = text.length * 6.6 + 14, cy = ty + h / 2;
      if (tx + w < WIDTH - MARGIN - 4) {
        el("rect", { x: tx, y: cy - 9, width: w, height: 18, rx: 9, fill: head ? C.glowHead : C.glowOpen }, parent);
        label(parent, tx + 7, cy + 1, text, 12, head ? C.text : C.header, "start", "central");
      }
    }
  }

  // the hand panel: the hands this page may show (R15), or the round's result
  el("rect", { x: MARGIN, y: handTop, width: WIDTH - 2 * MARGIN, height: height - MARGIN - handTop, rx: 12, fill: C.feltDark, stroke: C.brass }, svg);
  const result = opts.roundResult;
  if (result) {
    const title = table.playing ? "Round over" : (result.final ? "Game over" : "Round over");
    const how = result.blocked ? "blocked (R23)" : "a player went out (R22)";
    label(svg, MARGIN + 14, handTop + 8, `${title}: ${how}      round score per seat:`, 17, C.turn);
    result.scores.forEach((v, p) => label(svg, MARGIN + 14 + (p % 6) * 200, handTop + HAND_TITLE_H + 14 + 22 * Math.floor(p / 6), `player_${p}: ${v}`, 14, C.text));
    return;
  }
  if (!handRows) {
    label(svg, MARGIN + 14, handTop + 8, "hands hidden", 17, C.dim);
    return;
  }
  handSeats.forEach((q, row) => {
    const hand = table.hands[q];
    const top = handTop + (handRows > 1 ? 6 + row * perHandRow : 8);
    const onTurn = table.playing && q === table.current;
    const title = handRows > 1
      ? `player_${q}${names[q] ? " (" + names[q] + ")" : ""}: ${plural(hand.length, "tile")}`
      : `player_${q}${onTurn ? " to play" : ""}  -  hand: ${plural(hand.length, "tile")}`;
    label(svg, MARGIN + 14, top, title, handRows > 1 ? 12 : 17, onTurn ? C.turn : C.text);
    const y0 = top + (handRows > 1 ? 16 : HAND_TITLE_H);
    const [h, perRow, gap] = fit(hand.length, WIDTH - 2 * MARGIN - 28, handRows > 1 ? rowHalf : perHandRow, rowHalf, 6);
    hand.forEach(([a, b], i) => {
      const r = Math.floor(i / perRow), c = i % perRow;
      const tx = MARGIN + 14 + c * (2 * h + gap), ty = y0 + r * (h + gap + 6);
      const k = key([a, b]);
      const g = tile(svg, tx, ty, a, b, h);
      g.setAttribute("data-tile", k);
      if (byTile.has(k)) {
        g.classList.add("playable");
        el("rect", { x: 3, y: h + 2, width: 2 * h - 6, height: 3, rx: 2, fill: C.playable }, g);
        g.addEventListener("click", () => opts.onTile && opts.onTile(k));
        if (opts.selected === k) {
          g.classList.add("selected");
          el("rect", { x: -3, y: -3, width: 2 * h + 6, height: h + 6, rx: 6, fill: "none", stroke: C.turn, "stroke-width": 3 }, g);
        }
      }
    });
  });
  if (byTile.size) label(svg, MARGIN + 14, height - MARGIN - 20, opts.selected ? "click a green train to lay the selected tile" : "underlined: playable now (click one)", 12, C.playable);
}
