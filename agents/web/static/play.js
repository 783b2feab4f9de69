// Play against agents: the new-game form, the table (only this seat's view), moves by click.
import { api, scoreTable } from "/static/api.js";
import { drawTable } from "/static/table.js";

const $ = (id) => document.getElementById(id);
let options = null, state = null, selected = null, busy = false, roundsSeen = 0;
let token = null;  // the seat token of the game: POST /api/games answers it once
let tableAgents = [];  // the agents that can play the chosen table (networks are made for one)

const seatHeaders = () => ({ "X-Seat-Token": token });

function agentLabel(name) {
  // an agent that sees every hand says so where it is chosen
  return options && options.cheats.includes(name) ? `${name} (cheats: sees every hand)` : name;
}

function fillAgents(select, values, chosen) {
  select.replaceChildren(...values.map((v) => new Option(agentLabel(v), v, false, v === chosen)));
}

function setBusy(value) {
  busy = value;
  document.body.dataset.state = value ? "busy" : state ? (state.over ? "over" : "ready") : "setup";
  if (state) document.body.dataset.step = String(state.step);
}

function fillSelect(select, values, chosen) {
  select.replaceChildren(...values.map((v) => new Option(String(v), String(v), false, String(v) === String(chosen))));
}

function opponentsForm() {
  const n = Number($("players").value), seat = Number($("seat").value);
  const defaults = ["planner", "greedy", "random"].filter((a) => tableAgents.includes(a));
  const box = $("opponents");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  let k = 0;
  for (let q = 0; q < n; q++) {
    if (q === seat) continue;
    const lab = document.createElement("label");
    lab.textContent = `player_${q} `;
    const sel = document.createElement("select");
    sel.className = "opponent";
    sel.dataset.seat = String(q);
    const keep = tableAgents.includes(previous[k]) ? previous[k] : defaults[k % defaults.length];
    fillAgents(sel, tableAgents, keep);
    lab.appendChild(sel);
    box.appendChild(lab);
    k++;
  }
}

async function tableForm() {
  // ask which agents can play this table, then rebuild the seats and opponents
  const query = new URLSearchParams({
    num_players: $("players").value, max_pips: $("max_pips").value, rules: $("rules").value,
  });
  try {
    tableAgents = (await api("GET", `/api/options?${query}`)).agents;
  } catch (err) {
    message(err.message, true);
    return;
  }
  seatForm();
}

function seatForm() {
  const n = Number($("players").value);
  fillSelect($("seat"), [...Array(n).keys()], Math.min(Number($("seat").value) || 0, n - 1));
  opponentsForm();
}

function message(text, error = false) {
  $("message").textContent = text;
  $("message").className = error ? "error" : "";
}

function replayLink(path) {
  if (!path) return;
  const a = document.createElement("a");
  a.href = `/viewer?path=${encodeURIComponent(path)}`;
  a.textContent = " Watch it in the viewer.";
  a.id = "replay-link";
  $("message").appendChild(a);
}

function render() {
  const t = state.table;
  const mine = state.legal;
  const over = state.over;
  const last = state.rounds.length ? state.rounds[state.rounds.length - 1] : null;
  drawTable($("table"), t, {
    names: state.agents,
    handSeats: [state.seat],
    legal: busy ? [] : mine,
    selected,
    roundResult: over && last ? { ...last, final: true } : null,
    onTile: (k) => { selected = selected === k ? null : k; render(); },
    onTrain: (train) => {
      const m = mine.find((x) => x.kind === "play" && x.train === train && `${Math.min(...x.tile)}-${Math.max(...x.tile)}` === selected);
      if (m) play(m.action);
    },
  });
  $("draw").disabled = busy || !mine.some((m) => m.kind === "draw");
  $("pass").disabled = busy || !mine.some((m) => m.kind === "pass");
  $("quit").disabled = busy || over;
  const log = $("log");
  for (const m of state.last_moves) {
    const line = document.createElement("div");
    line.textContent = `player_${m.seat} (${m.agent}): ${m.text}`;
    log.prepend(line);
  }
  state.last_moves = [];
  const scores = scoreTable(state.rounds, t.num_players, state.agents);
  if (scores) $("scores").replaceChildren(scores);
  if (over) {
    const you = state.totals[state.seat];
    message(`Game over: your score ${you}. Replay saved as ${state.replay}.`);
    replayLink(state.replay_path);
  } else if (mine.length) {
    const notes = [];
    if (state.rounds.length > roundsSeen) {
      const r = state.rounds[state.rounds.length - 1];
      const how = r.blocked ? "blocked (R23)" : `player_${r.went_out.indexOf(true)} went out`;
      notes.push(`round ${state.rounds.length} over, ${how}: you scored ${r.scores[state.seat]}; a new round is dealt`);
    }
    if (t.owes) notes.push("you owe a tile after your double (R18)");
    if (t.next_double >= 0) notes.push(`the double on ${t.next_double === t.num_players ? "the Mexican train" : "player_" + t.next_double + "'s train"} must be satisfied first (R20)`);
    if (t.has_drawn) notes.push("you have drawn");
    message(`Your turn. ${notes.join("; ")}`);
  }
  roundsSeen = state.rounds.length;
  setBusy(busy);
}

async function play(action) {
  if (busy || !state) return;
  setBusy(true);
  selected = null;
  render();
  try {
    state = await api("POST", `/api/games/${state.id}/move`, { seat: state.seat, action, step: state.step }, seatHeaders());
  } catch (err) {
    message(err.message, true);
    try { state = await api("GET", `/api/games/${state.id}`, undefined, seatHeaders()); } catch { /* the message above says why */ }
  }
  setBusy(false);
  render();
}

async function start(event) {
  event.preventDefault();
  if (busy) return;
  const body = {
    num_players: Number($("players").value),
    max_pips: Number($("max_pips").value),
    rules: $("rules").value,
    rounds: Number($("rounds").value),
    seat: Number($("seat").value),
    agents: [...document.querySelectorAll("select.opponent")].map((s) => s.value),
  };
  if ($("seed").value !== "") body.seed = Number($("seed").value);
  if (state && !state.over) await abandon();
  setBusy(true);
  message("dealing ...");
  try {
    state = await api("POST", "/api/games", body);
    token = state.token;
    $("log").replaceChildren();
    roundsSeen = 0;
    $("scores").replaceChildren("no round finished yet");
    selected = null;
    setBusy(false);
    render();
  } catch (err) {
    setBusy(false);
    message(err.message, true);
  }
}

async function abandon() {
  if (!state || state.over) return;
  try {
    const out = await api("DELETE", `/api/games/${state.id}`, undefined, seatHeaders());
    state.over = true;
    state.legal = [];
    render();
    message(`Game abandoned; replay saved as ${out.replay}.`);
    replayLink(out.replay_path);
  } catch (err) {
    message(err.message, true);
  }
}

function actionOf(kind) {
  const m = state && state.legal.find((x) => x.kind === kind);
  return m ? m.action : null;
}

async function init() {
  options = await api("GET", "/api/options");
  const [lo, hi] = options.players;
  fillSelect($("players"), Array.from({ length: hi - lo + 1 }, (_, i) => lo + i), 4);
  const [plo, phi] = options.max_pips;
  fillSelect($("max_pips"), Array.from({ length: phi - plo + 1 }, (_, i) => plo + i), 12);
  fillSelect($("rules"), options.presets, "pagat");
  await tableForm();
  for (const id of ["players", "max_pips", "rules"]) $(id).addEventListener("change", tableForm);
  $("seat").addEventListener("change", opponentsForm);
  $("setup").addEventListener("submit", start);
  $("draw").addEventListener("click", () => { const a = actionOf("draw"); if (a !== null) play(a); });
  $("pass").addEventListener("click", () => { const a = actionOf("pass"); if (a !== null) play(a); });
  $("quit").addEventListener("click", abandon);
  // a closed tab abandons its game (its replay is saved); the store evicts games left idle anyway
  window.addEventListener("pagehide", () => {
    if (state && !state.over) fetch(`/api/games/${state.id}`, { method: "DELETE", keepalive: true, headers: seatHeaders() });
  });
  message("Choose the game and the agents, then Start.");
  document.body.dataset.state = "setup";
}

init().catch((err) => message(err.message, true));
