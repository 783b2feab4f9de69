// JSON requests to the server; a refusal becomes an Error carrying the server's one-line message.
// A string body is a replay file (JSON Lines); `headers` adds e.g. a game's X-Seat-Token.
export async function api(method, url, body, headers = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.headers["content-type"] = typeof body === "string" ? "application/jsonl" : "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(url, init);
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (!response.ok) {
    const err = new Error((data && data.error) || `${response.status} ${response.statusText}`);
    err.status = response.status;
    throw err;
  }
  return data;
}

export function scoreTable(rounds, n, names) {
  // rows: each round's score per seat, then the session's totals
  if (!rounds.length) return null;
  const table = document.createElement("table");
  table.className = "scores";
  const head = table.insertRow();
  head.insertCell().textContent = "round";
  for (let q = 0; q < n; q++) {
    const th = document.createElement("th");
    th.textContent = names && names[q] ? `${q}: ${names[q]}` : `player_${q}`;
    head.appendChild(th);
  }
  const totals = new Array(n).fill(0);
  rounds.forEach((r, i) => {
    const row = table.insertRow();
    row.insertCell().textContent = `${i + 1}${r.blocked ? " (blocked)" : ""}`;
    r.scores.forEach((v, q) => { totals[q] += v; row.insertCell().textContent = v; });
  });
  const total = table.insertRow();
  total.insertCell().textContent = "total";
  totals.forEach((v) => { total.insertCell().textContent = v; });
  return table;
}
