"""The web table's API (FastAPI TestClient and a real uvicorn server): games against
agents, the seat's view only (no hidden tile in any response), the game store's cap,
replays for the viewer, and a client that disconnects mid-request."""

from __future__ import annotations

import json
import re
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from agents.play import play_game
from agents.registry import make_agent
from agents.web.app import create_app
from mtrain_env.mexican_train import raw_env
from mtrain_env.replay import ReplayRecorder, check_replay, dumps_replay, read_replay, write_replay
from mtrain_env.tilegame.tiles import bits_list
from tests import REPO
from tests.web_server import TableClient, live_server

JSONL = {"content-type": "application/jsonl"}  #: an uploaded replay's body type

TILE_TEXT = re.compile(r"(?<!\d)(\d+)\|(\d+)(?!\d)|\((\d+), (\d+)\)")


@pytest.fixture
def client(tmp_path: Path) -> Any:
    with TableClient(create_app(tmp_path / "replays", max_games=4)) as c:
        yield c


def store_game(client: Any, game_id: str) -> Any:
    return client.app.state.store.get(game_id)


#: keys that hold counts or seat numbers, not tiles; and round results (public once scored)
NOT_TILES = ("rounds", "round_result", "hand_counts", "open_doubles", "scores", "round_scores", "totals")


def tiles_in(obj: Any, skip: tuple[str, ...] = NOT_TILES) -> set[tuple[int, int]]:
    """Every tile an answer mentions: ``[a, b]`` pairs and ``a|b`` / ``(a, b)`` in text."""
    found: set[tuple[int, int]] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k not in skip:
                found |= tiles_in(v, skip)
    elif isinstance(obj, list):
        if len(obj) == 2 and all(type(x) is int for x in obj):
            found.add((min(obj), max(obj)))
        for v in obj:
            found |= tiles_in(v, skip)
    elif isinstance(obj, str):
        for m in TILE_TEXT.finditer(obj):
            a, b = (int(x) for x in (m.group(1, 2) if m.group(1) else m.group(3, 4)))
            found.add((min(a, b), max(a, b)))
    return found


def hidden_tiles(game: Any) -> set[tuple[int, int]]:
    """The tiles the human may not know: the other hands and the boneyard, right now."""
    s = game.env.state_obj
    tiles = game.env.config.tiles.tiles
    hidden = {tiles[i] for i in s.boneyard}
    for q, hand in enumerate(s.hands):
        if q != game.seat:
            hidden |= {tiles[i] for i in bits_list(hand)}
    return {(min(t), max(t)) for t in hidden}


def play_out(client: Any, state: dict[str, Any], pick: Any = lambda legal: legal[0]) -> list[dict[str, Any]]:
    """Play the human's seat to the game's end; every answer on the way."""
    answers = [state]
    while not state["over"]:
        move = pick(state["legal"])
        body = {"seat": state["seat"], "action": move["action"], "step": state["step"]}
        r = client.post(f"/api/games/{state['id']}/move", json=body)
        assert r.status_code == 200, r.text
        state = r.json()
        answers.append(state)
    return answers


def test_options_name_the_registry_and_presets(client: Any) -> None:
    data = client.get("/api/options").json()
    assert {"planner", "greedy", "random"} <= set(data["agents"])
    assert data["presets"] == ["cardinal", "pagat", "wikipedia"]


def test_options_for_a_table_list_only_the_agents_that_can_play_it(client: Any) -> None:
    """The form asks per table: a network made for 4 players (``ppo``) is not offered at 3,
    with the reason in ``refused``; a bad table is a 400 naming the parameter."""
    every = set(client.get("/api/options").json()["agents"])
    four = client.get("/api/options", params={"num_players": 4, "max_pips": 12, "rules": "pagat"}).json()
    three = client.get("/api/options", params={"num_players": 3, "max_pips": 12}).json()
    assert set(four["agents"]) == every - set(four["refused"]) and "ppo" in four["agents"]
    assert "ppo" not in three["agents"] and "ppo" in three["refused"]
    assert "another table" in three["refused"]["ppo"] and "3 players" in three["refused"]["ppo"]
    assert {"planner", "greedy", "random", "champion"} <= set(three["agents"])
    r = client.post("/api/games", json={"num_players": 3, "agents": ["ppo", "random"]})
    assert r.status_code == 400 and three["refused"]["ppo"] in r.json()["error"]
    bad = client.get("/api/options", params={"num_players": 3, "rules": "nosuch"})
    assert bad.status_code == 400 and "rules" in bad.json()["error"]
    assert client.get("/api/options", params={"num_players": 9}).status_code == 422


def test_a_game_plays_to_its_end_and_its_replay_re_simulates(client: Any, tmp_path: Path) -> None:
    r = client.post("/api/games", json={"seed": 11, "seat": 2, "agents": ["planner", "greedy", "random"]})
    assert r.status_code == 201, r.text
    state = r.json()
    assert state["agents"] == ["planner", "greedy", "human", "random"]
    answers = play_out(client, state)
    final = answers[-1]
    assert final["over"] and final["legal"] == [] and len(final["rounds"]) == 1
    assert final["replay_path"] == f"played/{final['replay']}"
    path = tmp_path / "replays" / "played" / final["replay"]
    replay = read_replay(path)
    check_replay(replay)
    assert replay.agents == ["planner", "greedy", "human", "random"]
    assert replay.final is not None and replay.final["scores"] == final["totals"]
    assert len(replay.steps) == final["step"]
    listed = client.get("/api/replays").json()["replays"]
    assert [x["path"] for x in listed] == [f"played/{final['replay']}"]


@pytest.mark.parametrize(
    ("config", "pick"),
    [
        ({"seed": 1, "agents": ["planner", "greedy", "random"]}, 0),
        ({"seed": 2, "num_players": 2, "max_pips": 6, "rounds": 3, "seat": 1, "agents": ["greedy"]}, -1),
        ({"seed": 3, "num_players": 6, "rules": "cardinal", "seat": 5, "agents": ["random"] * 5}, -1),
    ],
)
def test_no_answer_carries_a_hidden_tile(client: Any, config: dict[str, Any], pick: int) -> None:
    """R15: every answer is built from the human's view: its hand, never another hand or
    the boneyard (round results, public once a round is scored, are checked apart)."""
    state = client.post("/api/games", json=config).json()
    game = store_game(client, state["id"])
    seen_rounds = 0
    checked = 0
    while True:
        hidden = hidden_tiles(game)
        # moves of a round that ended since the last answer are past public plays
        skip = NOT_TILES + (("last_moves",) if len(state["rounds"]) > seen_rounds else ())
        leaked = tiles_in(state, skip) & hidden
        assert not leaked, f"step {state['step']}: hidden tiles {sorted(leaked)} in the answer"
        assert [h is None for h in state["table"]["hands"]] == [
            q != game.seat for q in range(len(game.names))
        ]
        assert "boneyard" not in json.dumps(state["legal"])
        assert isinstance(state["table"]["boneyard"], int)
        # a round result names every hand only once that round is scored (R24)
        for result in state["rounds"][seen_rounds:]:
            assert result["round"] == seen_rounds
            seen_rounds += 1
        checked += 1
        if state["over"]:
            break
        move = state["legal"][pick]
        body = {"seat": state["seat"], "action": move["action"], "step": state["step"]}
        state = client.post(f"/api/games/{state['id']}/move", json=body).json()
    assert checked > 3
    assert seen_rounds == game.setup.config.rounds


class _Crashing:
    """Stands in for an agent whose ``act`` has a bug (everything else delegated)."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    def act(self, decision: Any) -> int:
        raise ZeroDivisionError("a bug in the agent")


def test_an_agent_that_raises_ends_the_game_with_a_409_and_keeps_its_replay(client: Any) -> None:
    """An agent's exception mid-game is the agent's bug: the game ends (409 naming the agent
    and the exception, not a 500), its unfinished replay is saved, the server goes on."""
    state = client.post("/api/games", json={"seed": 5, "agents": ["planner", "greedy", "random"]}).json()
    game = store_game(client, state["id"])
    nxt = (game.seat + 1) % 4
    game.agents[nxt] = _Crashing(game.agents[nxt])
    for _ in range(50):  # the human may move several times first (the opening, R9)
        body = {"seat": state["seat"], "action": state["legal"][0]["action"], "step": state["step"]}
        r = client.post(f"/api/games/{state['id']}/move", json=body)
        if r.status_code != 200:
            break
        state = r.json()
    assert r.status_code == 409, r.text
    assert f"at seat {nxt} raised ZeroDivisionError: a bug in the agent" in r.json()["error"]
    assert game.over and game.saved is not None and game.saved.exists()
    assert client.post("/api/games", json={"seed": 6, "agents": ["random"] * 3}).status_code == 201


def test_an_agent_that_raises_before_the_humans_first_turn_is_a_409(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agents move first when the human sits later: a bug there refuses the new game
    with a 409 naming the agent (not a 500), and nothing is stored."""
    import agents.web.games as games

    monkeypatch.setattr(games, "make_agent", lambda name, **kw: _Crashing(make_agent(name, **kw)))
    r = client.post("/api/games", json={"seed": 5, "seat": 3, "agents": ["planner", "greedy", "random"]})
    assert r.status_code == 409, r.text
    assert "could not start" in r.json()["error"] and "raised ZeroDivisionError" in r.json()["error"]
    assert len(client.app.state.store._games) == 0


def test_refused_moves_leave_the_game_unchanged(client: Any) -> None:
    state = client.post("/api/games", json={"seed": 5, "agents": ["planner", "greedy", "random"]}).json()
    gid, seat, step = state["id"], state["seat"], state["step"]
    game = store_game(client, gid)
    before = json.dumps(game.env.state_dict(), sort_keys=True)
    legal = {m["action"] for m in state["legal"]}
    illegal = next(a for a in range(game.env.codec.num_actions) if a not in legal)
    cases = [
        ({"seat": seat, "action": illegal, "step": step}, 400, "illegal move"),
        ({"seat": (seat + 1) % 4, "action": min(legal), "step": step}, 403, "played by agent"),
        ({"seat": seat, "action": min(legal), "step": step + 1}, 409, "stale move"),
        ({"seat": seat, "action": 10**6, "step": step}, 400, "action must be"),
        ({"seat": seat, "action": "1", "step": step}, 422, "action"),
        ({"seat": seat, "action": 1.0, "step": step}, 422, "action"),
        ({"seat": seat, "action": min(legal), "step": step, "extra": 1}, 422, "extra"),
        ({"seat": True, "action": min(legal), "step": step}, 422, "seat"),
    ]
    for body, status, words in cases:
        r = client.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == status, (body, r.text)
        assert words in r.json()["error"], (body, r.json())
    assert json.dumps(game.env.state_dict(), sort_keys=True) == before
    assert client.get(f"/api/games/{gid}").json()["step"] == step


def test_bad_new_games_are_refused_with_a_message(client: Any) -> None:
    cases = [
        ({"agents": ["planner", "nobody", "random"]}, "unknown agent"),
        ({"agents": ["agents.mexican_train.greedy:GreedyAgent"] * 3}, "unknown agent"),
        ({"num_players": 3}, "3 players need 2 agents"),
        ({"seat": 5}, "seat must be 0..3"),
        ({"rules": "chess"}, "rules preset"),
        ({"num_players": 9}, "num_players"),
        ({"rounds": 14, "max_pips": 12}, "R25"),
        ({"max_pips": "12"}, "max_pips"),
        ({"seed": -1}, "seed"),
        ({"num_players": 3, "agents": ["planner", "ppo"]}, "agent ppo: policy"),  # a 4-player network
    ]
    for body, words in cases:
        r = client.post("/api/games", json=body)
        assert 400 <= r.status_code < 500, (body, r.text)
        assert words in r.json()["error"], (body, r.json())
    assert len(client.app.state.store) == 0


def test_the_web_tables_seat_cap_is_the_one_the_guide_states(client: Any) -> None:
    """The engine seats 9 at double-15 (R3: N - 1 past double-12); the web table stops at
    ``MAX_WEB_PLAYERS`` (8) whatever the set, says so in ``/api/options`` and refuses more
    with a 422 naming ``num_players``; the guide's web section (docs/replays.md) states the same cap."""
    from agents.web.schemas import MAX_WEB_PLAYERS
    from mtrain_env.mexican_train import GameConfig

    assert MAX_WEB_PLAYERS == 8 and GameConfig.make(num_players=9, max_pips=15).num_players == 9
    assert client.get("/api/options").json()["players"] == [2, MAX_WEB_PLAYERS]
    r = client.post("/api/games", json={"num_players": 9, "max_pips": 15, "agents": ["random"] * 8})
    assert r.status_code == 422 and "num_players" in r.json()["error"], r.text
    guide = (REPO / "docs" / "replays.md").read_text(encoding="utf-8")
    web = guide[guide.index("## Web table") :]
    web = " ".join(web[: web.index("\n## ")].split() if "\n## " in web else web.split())
    assert f"The web table seats 2 to {MAX_WEB_PLAYERS} players whatever the set" in web
    assert "`agents.web.schemas.MAX_WEB_PLAYERS`" in web


def test_unknown_and_malformed_game_ids(client: Any) -> None:
    r = client.get("/api/games/" + "f" * 32)
    assert r.status_code == 404 and "no game" in r.json()["error"]
    r = client.get("/api/games/../../etc/passwd")
    assert r.status_code == 404
    r = client.post("/api/games/XYZ/move", json={"seat": 0, "action": 0, "step": 0})
    assert r.status_code == 422 and "game_id" in r.json()["error"]
    r = client.delete("/api/games/" + "0" * 32)
    assert r.status_code == 404


def test_huge_bodies_are_refused_before_they_are_read(client: Any) -> None:
    big = b'{"agents": [' + b'"random",' * 10_000 + b'"random"]}'
    r = client.post("/api/games", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "too large" in r.json()["error"]

    def chunks() -> Any:  # no Content-Length: counted as it streams
        for _ in range(100):
            yield b" " * 1024

    r = client.post("/api/games", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert len(client.app.state.store) == 0


def test_the_store_evicts_the_oldest_idle_game_and_saves_its_replay(tmp_path: Path) -> None:
    app = create_app(tmp_path, max_games=2, idle_seconds=0)
    with TableClient(app) as c:
        ids = [c.post("/api/games", json={"seed": s}).json()["id"] for s in range(3)]
        assert c.get(f"/api/games/{ids[0]}").status_code == 404
        assert all(c.get(f"/api/games/{i}").status_code == 200 for i in ids[1:])
        saved = list((tmp_path / "played").glob("*.jsonl"))
        assert len(saved) == 1
        replay = read_replay(saved[0])
        assert replay.final is None  # cut short
        check_replay(replay)


def test_a_full_store_answers_503_until_a_game_is_idle(tmp_path: Path) -> None:
    with TableClient(create_app(tmp_path, max_games=1, idle_seconds=3600)) as c:
        first = c.post("/api/games", json={"seed": 1}).json()["id"]
        r = c.post("/api/games", json={"seed": 2})
        assert r.status_code == 503 and "--max-games" in r.json()["error"]
        assert c.get(f"/api/games/{first}").status_code == 200
        assert c.delete(f"/api/games/{first}").json()["abandoned"] is True
        assert c.post("/api/games", json={"seed": 2}).status_code == 201


def test_a_finished_game_makes_room_before_any_idle_one(tmp_path: Path) -> None:
    with TableClient(create_app(tmp_path, max_games=2, idle_seconds=3600)) as c:
        done = play_out(c, c.post("/api/games", json={"seed": 1}).json())[-1]
        live = c.post("/api/games", json={"seed": 2}).json()["id"]
        assert c.post("/api/games", json={"seed": 3}).status_code == 201
        assert c.get(f"/api/games/{done['id']}").status_code == 404
        assert c.get(f"/api/games/{live}").status_code == 200
        assert len(list((tmp_path / "played").glob("*.jsonl"))) == 1  # saved once, at its end


def test_a_busy_game_answers_409(client: Any) -> None:
    state = client.post("/api/games", json={"seed": 4}).json()
    game = store_game(client, state["id"])
    with game.lock:
        r = client.get(f"/api/games/{state['id']}")
    assert r.status_code == 409 and "busy" in r.json()["error"]
    assert client.get(f"/api/games/{state['id']}").status_code == 200


def tournament_style_replay(path: Path, seed: int = 3) -> None:
    """A game between agents recorded as a tournament records it (mc's values as annotations)."""
    env = raw_env()
    names = ["mc", "planner", "greedy", "random"]
    agents = [
        make_agent(n, seed=seed + i, **({"rollouts": 8} if n == "mc" else {})) for i, n in enumerate(names)
    ]
    env.reset(seed=seed)
    recorder = ReplayRecorder(env, seed, names)
    play_game(env, agents, seed=seed, observer=recorder)
    write_replay(path, recorder.replay)


def test_the_viewer_gets_every_frame_with_hands_as_asked(tmp_path: Path) -> None:
    tournament_style_replay(tmp_path / "t" / "game.jsonl")
    with TableClient(create_app(tmp_path)) as c:
        data = c.get("/api/replays/view", params={"path": "t/game.jsonl"}).json()
        assert len(data["frames"]) == len(data["steps"]) + 1
        assert all(h is not None for h in data["frames"][0]["hands"])
        annotated = [s for s in data["steps"] if s["annotations"]]
        assert annotated and all("text" in row for row in annotated[0]["annotations"]["values"]["rows"])
        assert data["header"]["seed"] == "3"
        seat1 = c.get("/api/replays/view", params={"path": "t/game.jsonl", "seat": 1}).json()
        for frame in seat1["frames"]:
            assert [h is None for h in frame["hands"]] == [True, False, True, True]
        # a seat's view: not mc's values over its moves (they tell its tiles), nor the seed
        # (it deals every hand again); mc's own view keeps them
        assert all(step["annotations"] is None for step in seat1["steps"]) and seat1["header"]["seed"] is None
        up1 = c.post(
            "/api/replays/upload",
            params={"seat": 1},
            content=(tmp_path / "t" / "game.jsonl").read_bytes(),
            headers=JSONL,
        )
        assert up1.status_code == 200 and up1.json()["steps"] == seat1["steps"]
        seat0 = c.get("/api/replays/view", params={"path": "t/game.jsonl", "seat": 0}).json()
        assert [s["annotations"] for s in seat0["steps"]] == [s["annotations"] for s in data["steps"]]
        # the same file uploaded gives the same frames
        up = c.post(
            "/api/replays/upload", content=(tmp_path / "t" / "game.jsonl").read_bytes(), headers=JSONL
        )
        assert up.status_code == 200 and up.json()["frames"] == data["frames"]


def test_bad_replay_requests(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path.parent / "outside.jsonl").write_text("{}\n")
    with TableClient(create_app(tmp_path)) as c:
        cases = [
            ({"path": "../outside.jsonl"}, 403, "outside"),
            ({"path": "missing.jsonl"}, 404, "no replay"),
            ({"path": "bad.jsonl"}, 400, "damaged replay"),
            ({"path": "x.txt"}, 400, ".jsonl"),
            ({"path": "bad.jsonl", "seat": 9}, 422, "seat"),
        ]
        for params, status, words in cases:
            r = c.get("/api/replays/view", params=params)
            assert r.status_code == status, (params, r.text)
            assert words in r.json()["error"]
        r = c.post("/api/replays/upload", content=b"\xff\xfe\n", headers=JSONL)
        assert r.status_code == 400 and "UTF-8" in r.json()["error"]


def test_uploads_with_damaged_headers_or_odd_annotations_are_4xx_or_shown(tmp_path: Path) -> None:
    """Every upload is refused with a 4xx naming the damage, or shown: never a 500 (reset
    options the env refuses, JSON nested past Python's recursion limit, an annotation key
    that str.isdigit() calls a digit but int() refuses)."""
    tournament_style_replay(tmp_path / "game.jsonl")
    lines = (tmp_path / "game.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    replay = read_replay(tmp_path / "game.jsonl")
    odd = replace(replay.steps[0], annotations={"values": {"\u00b2": 1.0}})
    uploads = {
        "first player": [json.dumps({**header, "options": {"first_player": 9}}), *lines[1:]],
        "deal": [json.dumps({**header, "options": {"deal": 5}}), *lines[1:]],
        "nesting": [lines[0], "[" * 5000 + "]" * 5000, *lines[2:]],
        # a whole file (its closing line vouches for it), whose first decision has the odd key
        "annotation": dumps_replay(replace(replay, steps=[odd, *replay.steps[1:]])).splitlines(),
    }
    with TableClient(create_app(tmp_path), raise_server_exceptions=False) as c:
        for kind, body in uploads.items():
            r = c.post("/api/replays/upload", content="\n".join(body) + "\n", headers=JSONL)
            assert r.status_code < 500, (kind, r.text)
            assert r.status_code == 200 if kind == "annotation" else "damaged replay" in r.json()["error"]


def test_a_replay_that_does_not_re_simulate_is_refused(tmp_path: Path) -> None:
    tournament_style_replay(tmp_path / "game.jsonl")
    replay = read_replay(tmp_path / "game.jsonl")
    write_replay(tmp_path / "game.jsonl", replace(replay, seed=replay.seed + 1))  # whole: closing line too
    with TableClient(create_app(tmp_path)) as c:
        r = c.get("/api/replays/view", params={"path": "game.jsonl"})
        assert r.status_code == 422 and "does not re-simulate" in r.json()["error"]


def test_a_client_that_disconnects_mid_request_leaves_the_game_whole(tmp_path: Path) -> None:
    import httpx

    with live_server(tmp_path) as (url, app):
        state = httpx.post(f"{url}/api/games", json={"seed": 9}).json()
        gid = state["id"]
        seat = {"X-Seat-Token": state["token"]}
        move = {"seat": state["seat"], "action": state["legal"][0]["action"], "step": state["step"]}
        body = json.dumps(move).encode()
        host, port = url.removeprefix("http://").split(":")
        head = (
            f"POST /api/games/{gid}/move HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"X-Seat-Token: {state['token']}\r\n"
        )
        # 1. half a body, then gone
        with socket.create_connection((host, int(port))) as s:
            s.sendall((head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body[:5])
        # 2. a whole move, gone before the answer
        with socket.create_connection((host, int(port))) as s:
            s.sendall((head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        for _ in range(200):  # the second move is applied whole by its own thread
            r = httpx.get(f"{url}/api/games/{gid}", headers=seat)
            if r.status_code == 200 and r.json()["step"] > state["step"]:
                break
        after = r.json()
        assert after["step"] > state["step"]  # applied once, whole, and the lock is free
        game = app.state.store.get(gid)
        assert not game.lock.locked()
        assert game.recorder.replay.steps[state["step"]].action == move["action"]
        r = httpx.post(f"{url}/api/games/{gid}/move", json=move, headers=seat)
        assert r.status_code == 409 and "stale move" in r.json()["error"]
        assert httpx.get(f"{url}/api/options").status_code == 200


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["serve", "--port", "70000"], "--port"),
        (["serve", "--port", "0"], "--port"),
        (["serve", "--max-games", "0"], "--max-games"),
        (["serve", "--idle-seconds", "-3"], "--idle-seconds"),
    ],
)
def test_bad_serve_command_lines_get_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], names: str
) -> None:
    from training.app import main

    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(argv))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert names in err and err.startswith("mtrain") and len(err.strip().splitlines()) == 1, err


def test_serve_refuses_a_replay_or_save_place_it_cannot_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file given as --replays, or a --save-dir under a file, is refused before the server
    starts (played games would otherwise fail to save when they end)."""
    from training.app import main

    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    for argv, says in (
        (["--replays", str(blocker)], f"--replays: {blocker} is a file, not a directory"),
        (
            ["--replays", str(tmp_path), "--save-dir", str(blocker / "p")],
            f"--save-dir: cannot create {blocker / 'p'}",
        ),
    ):
        assert main(["serve", "--port", "8999", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mtrain serve: {says}") and len(err.strip().splitlines()) == 1, err
    assert sorted(tmp_path.iterdir()) == [blocker]


def test_serve_refuses_a_host_or_port_it_cannot_listen_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A host that does not resolve and a port in use are usage errors named before the
    server prints its URL (uvicorn exited 3 after printing it)."""
    import socket

    from training.app import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for argv, says in (
            (["--host", "no.such.host.invalid"], "--host: cannot listen on 'no.such.host.invalid'"),
            (["--port", str(port)], f"--port: cannot listen on 127.0.0.1:{port} (Address already in use)"),
        ):
            assert main(["serve", "--replays", str(tmp_path), *argv]) == 2
            out, err = capsys.readouterr()
            assert err.startswith(f"mtrain serve: {says}") and len(err.strip().splitlines()) == 1, err
            assert "http://" not in out


def test_mtrain_serve_serves_both_pages(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    import time

    import httpx

    from tests.web_server import free_port

    port = free_port()
    cmd = [sys.executable, "-m", "training.app", "serve", "--port", str(port), "--replays", str(tmp_path)]
    root = REPO
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        for _ in range(300):
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/play", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.communicate()
                time.sleep(0.05)
        assert r.status_code == 200 and 'src="/static/play.js"' in r.text
        page = httpx.get(f"http://127.0.0.1:{port}/viewer")
        assert page.status_code == 200 and 'src="/static/viewer.js"' in page.text
        for asset in ("table.js", "api.js", "style.css"):
            assert httpx.get(f"http://127.0.0.1:{port}/static/{asset}").status_code == 200
    finally:
        proc.terminate()
        out, _err = proc.communicate(timeout=20)
    assert f"http://127.0.0.1:{port}/" in out


def test_the_pages_load_nothing_from_elsewhere() -> None:
    """No CDN, no external font: every file the pages use is served by the package."""
    static = REPO / "agents" / "web" / "static"
    files = sorted(static.iterdir())
    assert {f.name for f in files} >= {"index.html", "play.html", "viewer.html", "table.js", "style.css"}
    for f in files:
        text = f.read_text()
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)|//cdn|@import url", text), f.name


def test_the_same_move_sent_at_once_many_times_is_applied_once(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    with live_server(tmp_path) as (url, app):
        state = httpx.post(f"{url}/api/games", json={"seed": 12}).json()
        move = {"seat": state["seat"], "action": state["legal"][0]["action"], "step": state["step"]}
        target = f"{url}/api/games/{state['id']}/move"
        with ThreadPoolExecutor(8) as pool:
            seat = {"X-Seat-Token": state["token"]}
            answers = list(pool.map(lambda _: httpx.post(target, json=move, headers=seat), range(8)))
        codes = sorted(r.status_code for r in answers)
        assert codes == [200] + [409] * 7, [r.text for r in answers]
        game = app.state.store.get(state["id"])
        human_steps = [s for s in game.recorder.replay.steps if s.seat == state["seat"]]
        assert len(human_steps) == 1


def test_shutting_down_saves_every_unfinished_game(tmp_path: Path) -> None:
    with TableClient(create_app(tmp_path)) as c:
        for seed in (1, 2):
            assert c.post("/api/games", json={"seed": seed}).status_code == 201
    saved = sorted((tmp_path / "played").glob("*.jsonl"))
    assert len(saved) == 2
    for path in saved:
        replay = read_replay(path)
        assert replay.final is None
        check_replay(replay)


# ---------------------------------------------------------------- failing safe
def adversarial_upload(path: Path, line_chars: int) -> bytes:
    """A real replay whose every decision carries annotations of about ``line_chars``
    characters: a value for every action id (legal or not) and a list of empty lists, the
    JSON that costs the most memory per byte once parsed (sealed by its closing line)."""
    replay = read_replay(path)
    n_actions = raw_env().codec.num_actions
    values = {str(a): a / 1000 for a in range(n_actions)}
    room = line_chars - len(json.dumps({"values": values, "junk": []})) - 100
    annotations = {"values": values, "junk": [[]] * max(0, room // 4)}
    steps = [replace(step, annotations=annotations) for step in replay.steps]
    return dumps_replay(replace(replay, steps=steps)).encode()


def test_an_upload_of_huge_annotations_costs_memory_and_answer_bounded_by_its_size(tmp_path: Path) -> None:
    """Annotations are cut to what the viewer shows as the file is read, a line at a time:
    an upload of 20 KB annotation lines takes under 10 times its size in memory (traced
    allocations while the request is served) and answers under a quarter of its size; the
    values keep the best rows and the move played, with the table's size."""
    import tracemalloc

    tournament_style_replay(tmp_path / "game.jsonl")
    data = adversarial_upload(tmp_path / "game.jsonl", 20_000)
    assert len(data) > 1_000_000
    with TableClient(create_app(tmp_path)) as c:
        tracemalloc.start()
        try:
            r = c.post("/api/replays/upload", content=data, headers=JSONL)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert r.status_code == 200, r.text[:300]
    assert peak < 10 * len(data), (peak, len(data))
    assert len(r.content) < len(data) / 4, (len(r.content), len(data))
    from agents.web.tables import TOP_ROWS

    steps = r.json()["steps"]
    n_actions = raw_env().codec.num_actions
    for step in steps:
        values = step["annotations"]["values"]
        assert values["size"] == n_actions and TOP_ROWS <= len(values["rows"]) <= TOP_ROWS + 1
        assert [row["action"] for row in values["rows"]][:TOP_ROWS] == list(
            range(n_actions - 1, n_actions - 1 - TOP_ROWS, -1)
        )
        played = [row for row in values["rows"] if row["played"]]
        assert [row["action"] for row in played] == [step["move"]["action"]]
        assert values["played_rank"] == n_actions - step["move"]["action"]
        assert step["annotations"]["junk"].startswith("(a note of ")


def test_a_line_past_the_viewers_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    tournament_style_replay(tmp_path / "game.jsonl")
    data = adversarial_upload(tmp_path / "game.jsonl", 64 * 1024 + 100)
    with TableClient(create_app(tmp_path)) as c:
        r = c.post("/api/replays/upload", content=data, headers=JSONL)
    assert r.status_code == 400 and "over the 65536 this reader takes" in r.json()["error"], r.text[:200]
    assert "upload:2:" in r.json()["error"]


def test_bodies_that_are_not_json_are_refused_with_415(tmp_path: Path) -> None:
    """A page of another site may POST text/plain or a form without asking the server
    first; the API takes JSON only (an uploaded replay: JSON Lines), so it gets a 415."""
    tournament_style_replay(tmp_path / "game.jsonl")
    replay = (tmp_path / "game.jsonl").read_bytes()
    app = create_app(tmp_path)
    with TableClient(app) as c:
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None):
            headers = {} if kind is None else {"content-type": kind}
            r = c.post("/api/replays/upload", content=replay, headers=headers)
            assert r.status_code == 415 and "application/jsonl" in r.json()["error"], (kind, r.text)
            r = c.post("/api/games", content=b'{"seed": 1}', headers=headers)
            assert r.status_code == 415 and "application/json" in r.json()["error"], (kind, r.text)
        assert len(app.state.store) == 0
        ok = c.post("/api/replays/upload", content=replay, headers={"content-type": "application/x-ndjson"})
        assert ok.status_code == 200
        assert (
            c.post(
                "/api/games", content=b'{"seed": 1}', headers={"content-type": "application/json"}
            ).status_code
            == 201
        )


def test_requests_to_another_host_or_from_another_site_are_refused(tmp_path: Path) -> None:
    """DNS rebinding: a request naming a host the server does not answer to is a 421, on
    every route; a state change sent by another site's page (Origin, Sec-Fetch-Site) is a 403."""
    app = create_app(tmp_path, hosts=["table.lan"])
    with TableClient(app) as c:
        for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", ""):
            r = c.get("/api/options", headers={"host": host})
            assert r.status_code == 421 and "does not answer to host" in r.json()["error"], (host, r.text)
            assert c.post("/api/games", json={"seed": 1}, headers={"host": host}).status_code == 421
        for host in ("127.0.0.1:8000", "localhost", "[::1]:8000", "table.lan:8000", "TABLE.LAN"):
            assert c.get("/api/options", headers={"host": host}).status_code == 200, host
        cross = [
            {"origin": "http://evil.example"},
            {"origin": "null"},
            {"origin": "http://127.0.0.1:9999"},  # another port: another origin
            {"sec-fetch-site": "cross-site"},
            {"sec-fetch-site": "same-site"},
        ]
        for headers in cross:
            r = c.post("/api/games", json={"seed": 1}, headers=headers)
            assert r.status_code == 403 and "refused" in r.json()["error"], (headers, r.text)
        assert len(app.state.store) == 0
        same = {"origin": "http://127.0.0.1", "sec-fetch-site": "same-origin"}
        state = c.post("/api/games", json={"seed": 1}, headers=same).json()
        r = c.delete(f"/api/games/{state['id']}", headers={"sec-fetch-site": "cross-site"})
        assert r.status_code == 403 and c.get(f"/api/games/{state['id']}").status_code == 200
    with TableClient(create_app(tmp_path), base_url="http://testserver") as c:
        assert c.get("/").status_code == 421


def test_a_game_is_played_only_with_its_seat_token(client: Any) -> None:
    """Another user who knows a game's id cannot see its hand, move or abandon it: each
    needs the seat token the creating answer carried (and no later answer repeats)."""
    state = client.post("/api/games", json={"seed": 7}).json()
    gid, token = state["id"], state["token"]
    assert isinstance(token, str) and len(token) >= 24
    game = store_game(client, gid)
    before = json.dumps(game.env.state_dict(), sort_keys=True)
    move = {"seat": state["seat"], "action": state["legal"][0]["action"], "step": state["step"]}
    other = TableClient(client.app, tokens=False)  # no `with`: its end would shut the app down
    for headers in ({}, {"X-Seat-Token": token[:-1] + ("A" if token[-1] != "A" else "B")}):
        for r in (
            other.get(f"/api/games/{gid}", headers=headers),
            other.post(f"/api/games/{gid}/move", json=move, headers=headers),
            other.delete(f"/api/games/{gid}", headers=headers),
        ):
            assert r.status_code == 403 and "seat token" in r.json()["error"], r.text
            assert not tiles_in(r.json()) and token not in r.text
    assert json.dumps(game.env.state_dict(), sort_keys=True) == before and not game.over
    again = client.get(f"/api/games/{gid}")
    assert again.status_code == 200 and "token" not in again.json()
    assert client.post(f"/api/games/{gid}/move", json=move).status_code == 200


def test_one_client_cannot_fill_the_store(tmp_path: Path) -> None:
    """A client holds at most ``max_client_games`` live games (429 naming the option);
    other clients still get theirs, and a finished game does not count."""
    app = create_app(tmp_path, max_games=8, max_client_games=2, idle_seconds=3600)
    other = TableClient(app, client=("10.0.0.7", 5000))  # another address, the same app
    with TableClient(app) as c:
        done = play_out(c, c.post("/api/games", json={"seed": 1}).json())[-1]
        assert done["over"]
        assert [c.post("/api/games", json={"seed": s}).status_code for s in (2, 3)] == [201, 201]
        r = c.post("/api/games", json={"seed": 4})
        assert r.status_code == 429 and "--max-client-games 2" in r.json()["error"], r.text
        assert [other.post("/api/games", json={"seed": s}).status_code for s in (5, 6)] == [201, 201]
        assert len(app.state.store) == 5


def test_the_client_cap_makes_room_from_the_clients_own_idle_game(tmp_path: Path) -> None:
    app = create_app(tmp_path, max_games=8, max_client_games=1, idle_seconds=0)
    with TableClient(app) as c:
        first = c.post("/api/games", json={"seed": 1}).json()["id"]
        assert c.post("/api/games", json={"seed": 2}).status_code == 201
        assert c.get(f"/api/games/{first}").status_code == 404
        assert len(list((tmp_path / "played").glob("*.jsonl"))) == 1  # its replay saved


def test_a_request_sent_in_part_is_cut_off_after_the_request_timeout(tmp_path: Path) -> None:
    """uvicorn waits forever on a request that stalls; the server closes a connection
    whose request has not arrived whole ``request_timeout`` seconds after it was awaited
    (half a head, half a body, nothing at all), and answers whole requests as before."""
    import time

    import httpx

    with live_server(tmp_path, request_timeout=0.5) as (url, _app):
        host, port = url.removeprefix("http://").split(":")
        parts = [
            b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # the head, unfinished
            b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{",  # a body, unfinished
            b"",  # nothing
        ]
        socks = [socket.create_connection((host, int(port))) for _ in parts]
        try:
            for s, part in zip(socks, parts, strict=True):
                s.sendall(part)
                s.settimeout(5)
            start = time.monotonic()
            for s in socks:
                assert s.recv(1024) == b""  # closed by the server, no answer
            assert time.monotonic() - start < 4
        finally:
            for s in socks:
                s.close()
        assert httpx.get(f"{url}/api/options").status_code == 200


def test_serve_warns_beyond_loopback_and_runs_with_the_limits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--host 0.0.0.0`` prints a warning on stderr naming what others can do and the
    hosts answered to; 127.0.0.1 prints none. uvicorn runs with the request timeout, the
    keep-alive and head limits, and forwarded headers not trusted."""
    import uvicorn

    from agents.web import server
    from tests.web_server import LOGGING_SETUP, free_port
    from training.app import main

    configs: list[Any] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: configs.append(self.config))
    monkeypatch.setattr(LOGGING_SETUP, lambda self: None)  # it would close pytest's capture file
    for host, warns in (("0.0.0.0", True), ("127.0.0.1", False)):
        argv = ["serve", "--host", host, "--port", str(free_port()), "--replays", str(tmp_path)]
        assert main([*argv, "--allow-host", "table.lan"]) == 0
        err = capsys.readouterr().err
        assert ("warning: listening on 0.0.0.0, beyond this machine" in err) is warns, err
        if warns:
            assert "['0.0.0.0', 'table.lan']" in err and len(err.strip().splitlines()) == 1
    config = configs[-1]
    assert issubclass(config.http, server.RequestTimeoutProtocol)
    assert config.http.request_timeout == server.REQUEST_TIMEOUT
    assert config.timeout_keep_alive == server.KEEP_ALIVE
    assert config.h11_max_incomplete_event_size == server.HEAD_LIMIT
    assert config.proxy_headers is False


def test_options_label_the_agents_that_cheat(client: Any) -> None:
    """Agents whose class declares ``cheats`` (they see every hand) are listed as such,
    and the play page labels them."""
    from agents.registry import agent_class

    data = client.get("/api/options").json()
    assert "oracle" in data["cheats"] and "planner" not in data["cheats"]
    assert data["cheats"] == [a for a in data["agents"] if getattr(agent_class(a), "cheats", False)]
    play = (REPO / "agents" / "web" / "static" / "play.js").read_text()
    assert "options.cheats.includes(name)" in play and "(cheats: sees every hand)" in play


def block_saving(tmp_path: Path) -> tuple[Path, Path]:
    """A save directory under a regular file: every write fails, even as root."""
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the save directory's parent should be")
    return blocker, blocker / "played"


def test_an_abandoned_game_whose_replay_cannot_be_saved_is_kept(tmp_path: Path) -> None:
    """DELETE saves the replay before the game leaves the store: when it cannot, a JSON
    500 says so with the system's reason (no file name past the configured directory) and
    the game stays; once the directory can be written, DELETE saves it."""
    blocker, saves = block_saving(tmp_path)
    app = create_app(tmp_path, save_dir=saves)
    with TableClient(app, raise_server_exceptions=False) as c:
        state = c.post("/api/games", json={"seed": 3}).json()
        r = c.delete(f"/api/games/{state['id']}")
        assert r.status_code == 500, r.text
        error = r.json()["error"]
        assert "could not be saved" in error and "Not a directory" in error and str(saves) in error
        assert ".jsonl" not in error and not tiles_in(r.json())
        kept = c.get(f"/api/games/{state['id']}")
        assert kept.status_code == 200 and not kept.json()["over"]
        blocker.unlink()
        r = c.delete(f"/api/games/{state['id']}")
        assert r.status_code == 200 and r.json()["abandoned"] is True
        saved = saves / r.json()["replay"]
        check_replay(read_replay(saved))
        assert c.get(f"/api/games/{state['id']}").status_code == 404


def test_a_game_that_ends_when_its_replay_cannot_be_saved_keeps_it(tmp_path: Path) -> None:
    """The move that ends the game gets a JSON 500 saying the replay could not be saved;
    the finished game stays (over, unsaved) and DELETE saves its whole replay later."""
    blocker, saves = block_saving(tmp_path)
    app = create_app(tmp_path, save_dir=saves)
    with TableClient(app, raise_server_exceptions=False) as c:
        state = c.post(
            "/api/games", json={"seed": 2, "num_players": 2, "max_pips": 6, "agents": ["greedy"]}
        ).json()
        while True:
            move = {"seat": state["seat"], "action": state["legal"][0]["action"], "step": state["step"]}
            r = c.post(f"/api/games/{state['id']}/move", json=move)
            if r.status_code != 200:
                break
            state = r.json()
            assert not state["over"]
        assert r.status_code == 500 and "could not be saved" in r.json()["error"], r.text
        after = c.get(f"/api/games/{state['id']}").json()
        assert after["over"] and after["replay"] is None
        blocker.unlink()
        r = c.delete(f"/api/games/{state['id']}")
        assert r.status_code == 200
        replay = read_replay(saves / r.json()["replay"])
        assert replay.final is not None
        check_replay(replay)


def test_the_list_holds_only_replays_and_skips_what_vanishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dangling link, a file removed while the list is made, JSON Lines that are not
    replays (a bench's timing.jsonl) and a link out of the directory are left out; the
    listing answers 200 with the replays only."""
    import os

    import agents.web.replays as replays

    tournament_style_replay(tmp_path / "runs" / "game.jsonl")
    (tmp_path / "runs" / "timing.jsonl").write_text('{"deal": 0, "seconds": 1.5}\n')
    (tmp_path / "runs" / "empty.jsonl").write_text("")
    (tmp_path / "runs" / "dangling.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.jsonl"
    outside.write_bytes((tmp_path / "runs" / "game.jsonl").read_bytes())
    (tmp_path / "runs" / "out.jsonl").symlink_to(outside)
    walk = os.walk

    def walk_with_a_vanished_file(top: Any, *args: Any, **kwargs: Any) -> Any:
        for dirpath, dirs, files in walk(top, *args, **kwargs):
            yield dirpath, dirs, [*files, "vanished.jsonl"]

    monkeypatch.setattr(replays.os, "walk", walk_with_a_vanished_file)
    try:
        with TableClient(create_app(tmp_path / "runs")) as c:
            r = c.get("/api/replays")
    finally:
        outside.unlink()
    assert r.status_code == 200, r.text
    assert [x["path"] for x in r.json()["replays"]] == ["game.jsonl"]


def test_the_viewer_says_what_an_annotation_means_and_marks_the_move_played(tmp_path: Path) -> None:
    """mc's values: the round's result in pips against the table's mean, higher better; the
    rows best first with the move played marked and its rank in the whole table (mc's gate
    may keep its prior's move over a better-ranked one)."""
    from agents.web.tables import ANNOTATION_MEANINGS

    tournament_style_replay(tmp_path / "game.jsonl")
    replay = read_replay(tmp_path / "game.jsonl")
    with TableClient(create_app(tmp_path)) as c:
        data = c.get("/api/replays/view", params={"path": "game.jsonl"}).json()
    checked = 0
    for step, recorded in zip(data["steps"], replay.steps, strict=True):
        if not recorded.annotations:
            continue
        values = step["annotations"]["values"]
        assert values["meaning"] == ANNOTATION_MEANINGS["values"]
        assert "pips" in values["meaning"] and "higher is better" in values["meaning"]
        table = recorded.annotations["values"]
        ranked = sorted(table, key=lambda a: (-table[a], int(a)))
        assert [r["action"] for r in values["rows"]] == [int(a) for a in ranked]
        assert values["size"] == len(table)
        assert values["played_rank"] == ranked.index(str(recorded.action)) + 1
        assert [r["played"] for r in values["rows"]] == [int(a) == recorded.action for a in ranked]
        checked += 1
    assert checked > 3
    viewer = (REPO / "agents" / "web" / "static" / "viewer.js").read_text()
    assert "decision #${index}" in viewer  # numbered from 0, as `mtrain replay show` (#0)
