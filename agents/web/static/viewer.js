// The replay viewer: a replay's frames from the server, a slider over them, play/pause,
// every hand or one seat's view, and each decision with the agent's annotations.
import { api, scoreTable } from "/static/api.js";
import { drawTable } from "/static/table.js";

const $ = (id) => document.getElementById(id);
let replay = null, index = 0, timer = null, source = null;

function message(text, error = false) {
  $("message").textContent = text;
  $("message").className = error ? "error" : "";
}

function annotationsView(notes) {
  // an action table: what its numbers mean, the best moves, the move played marked
  const box = document.createElement("div");
  if (!notes) return box;
  for (const [name, value] of Object.entries(notes)) {
    const h = document.createElement("div");
    h.className = "note-name";
    h.textContent = name;
    box.appendChild(h);
    if (value && Array.isArray(value.rows)) {
      const about = document.createElement("div");
      about.className = "muted meaning";
      about.textContent = value.meaning || "(no agent known here writes this table: its numbers are shown as recorded)";
      box.appendChild(about);
      const ol = document.createElement("ol");
      for (const row of value.rows) {
        const li = document.createElement("li");
        const v = typeof row.value === "number" ? Number(row.value.toFixed(3)) : row.value;
        li.textContent = `${row.text}: ${v}${row.played ? "  \u25c0 played" : ""}`;
        if (row.played) li.className = "played";
        ol.appendChild(li);
      }
      box.appendChild(ol);
      const shown = value.rows.length;
      const parts = [];
      if (value.size > shown) parts.push(`the best ${shown} of ${value.size} moves shown`);
      if (value.played_rank !== null) parts.push(`the move played ranks ${value.played_rank} of ${value.size}`);
      else parts.push("the move played is not in this table");
      const foot = document.createElement("div");
      foot.className = "muted";
      foot.textContent = parts.join("; ");
      box.appendChild(foot);
    } else {
      const pre = document.createElement("pre");
      pre.textContent = JSON.stringify(value, null, 1);
      box.appendChild(pre);
    }
  }
  return box;
}

function show(k) {
  if (!replay) return;
  index = Math.max(0, Math.min(k, replay.frames.length - 1));
  const frame = replay.frames[index];
  const next = replay.steps[index] || null; // the decision taken from this position
  const prev = index > 0 ? replay.steps[index - 1] : null;
  const seat = replay.seat;
  const n = frame.num_players;
  const handSeats = seat === null ? [...Array(n).keys()] : [seat];
  const atEnd = index === replay.frames.length - 1 && replay.final;
  const result = frame.round_result || null;
  drawTable($("table"), frame, {
    names: replay.header.agents,
    handSeats,
    lastMove: prev && prev.move.kind === "play" ? prev.move : null,
    roundResult: result && (atEnd || index === replay.frames.length - 1) ? { ...result, final: !!atEnd } : null,
  });
  $("slider").value = String(index);
  $("position").textContent = `position ${index} / ${replay.frames.length - 1}`;
  document.body.dataset.index = String(index);
  const decision = $("decision");
  if (next) {
    // numbered from 0, as `mtrain replay show` numbers them (#0 is the first decision)
    decision.textContent = `decision #${index}: player_${next.seat} (${next.agent}) plays ${next.move.text}`;
  } else {
    decision.textContent = replay.final ? "the game is over" : "the replay ends here (game cut short)";
  }
  if (prev && result) decision.textContent += ` | round ${replay.rounds.indexOf(result) + 1} ended: scores ${result.scores.join(", ")}`;
  $("annotations").replaceChildren(annotationsView(next && next.annotations));
  const done = replay.rounds.filter((_, i) => replay.frames.findIndex((f) => f.round_result === replay.rounds[i]) <= index);
  const table = scoreTable(done, n, replay.header.agents);
  $("scores").replaceChildren(table || "no round finished yet");
}

function stop() {
  if (timer) clearInterval(timer);
  timer = null;
  $("playpause").textContent = "Play";
}

function toggle() {
  if (!replay) return;
  if (timer) { stop(); return; }
  if (index >= replay.frames.length - 1) show(0);
  $("playpause").textContent = "Pause";
  timer = setInterval(() => {
    if (index >= replay.frames.length - 1) stop();
    else show(index + 1);
  }, 450);
}

function loaded(data, name) {
  stop();
  replay = data;
  // frames and the round results they carry share objects, so scores can be counted by position
  replay.frames.forEach((f) => {
    if (f.round_result) {
      const i = replay.rounds.findIndex((r) => JSON.stringify(r) === JSON.stringify(f.round_result));
      if (i >= 0) f.round_result = replay.rounds[i];
    }
  });
  const h = data.header;
  $("slider").max = String(data.frames.length - 1);
  $("about").textContent = `${name}: ${h.config.num_players} players, double-${h.config.max_pips}, ${h.config.rules} rules, ${h.seed === null ? "seed hidden (a seat's view)" : `seed ${h.seed}`}; `
    + `${data.steps.length} decisions; ${h.agents.map((a, q) => `player_${q} ${a}`).join(", ")}${h.finished ? "" : " (cut short)"}`;
  const seatSel = $("seat");
  const chosen = data.seat === null ? "" : String(data.seat);
  seatSel.replaceChildren(new Option("every hand", ""), ...h.agents.map((a, q) => new Option(`player_${q}'s view (${a})`, String(q))));
  seatSel.value = chosen;
  message("");
  document.body.dataset.state = "loaded";
  show(0);
}

async function load(src) {
  source = src;
  const seat = $("seat").value;
  const query = seat === "" ? "" : `seat=${seat}`;
  message("loading ...");
  document.body.dataset.state = "loading";
  try {
    const data = src.path !== undefined
      ? await api("GET", `/api/replays/view?path=${encodeURIComponent(src.path)}${query ? "&" + query : ""}`)
      : await api("POST", `/api/replays/upload${query ? "?" + query : ""}`, src.text);
    const keep = replay && replay.frames.length === data.frames.length ? index : 0;
    loaded(data, src.path !== undefined ? src.path : src.name);
    show(keep);
  } catch (err) {
    document.body.dataset.state = "error";
    message(err.message, true);
  }
}

async function init() {
  const list = await api("GET", "/api/replays");
  const files = $("files");
  for (const r of list.replays) files.appendChild(new Option(r.path, r.path));
  files.addEventListener("change", () => { if (files.value) load({ path: files.value }); });
  $("upload").addEventListener("change", async () => {
    const file = $("upload").files[0];
    if (file) load({ name: file.name, text: await file.text() });
  });
  $("seat").addEventListener("change", () => { if (source) load(source); });
  $("slider").addEventListener("input", () => { stop(); show(Number($("slider").value)); });
  $("first").addEventListener("click", () => { stop(); show(0); });
  $("prev").addEventListener("click", () => { stop(); show(index - 1); });
  $("next").addEventListener("click", () => { stop(); show(index + 1); });
  $("last").addEventListener("click", () => { stop(); if (replay) show(replay.frames.length - 1); });
  $("playpause").addEventListener("click", toggle);
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight") { stop(); show(index + 1); }
    if (e.key === "ArrowLeft") { stop(); show(index - 1); }
    if (e.key === " " && e.target === document.body) { e.preventDefault(); toggle(); }
  });
  const wanted = new URLSearchParams(location.search).get("path");
  if (wanted) { files.value = wanted; load({ path: wanted }); }
  else message(list.replays.length ? "Choose a replay." : `No replay under ${list.dir}; upload one.`);
}

init().catch((err) => message(err.message, true));
