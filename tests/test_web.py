"""The web table's API (FastAPI TestClient and a real uvicorn server): games against
agents, the seat's view only (no hidden tile in any response), the game store's cap,
replays for the viewer, and a client that disconnects mid-request."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from agents.play import play_game
from agents.registry import make_agent
from agents.web.app import create_app
from mtrain_env.mexican_train import raw_env
from mtrain_env.replay import ReplayRecorder, check_replay, read_replay, write_replay
from mtrain_env.tilegame.tiles import bits_list
from tests.web_server import live_server

TILE_TEXT = re.compile(r"(?<!\d)(\d+)\|(\d+)(?!\d)|\((\d+), (\d+)\)")


@pytest.fixture
def client(tmp_path: Path) -> Any:
    with TestClient(create_app(tmp_path / "replays", max_games=4)) as c:
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
    guide = (Path(__file__).resolve().parent.parent / "docs" / "replays.md").read_text(encoding="utf-8")
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
    with TestClient(app) as c:
        ids = [c.post("/api/games", json={"seed": s}).json()["id"] for s in range(3)]
        assert c.get(f"/api/games/{ids[0]}").status_code == 404
        assert all(c.get(f"/api/games/{i}").status_code == 200 for i in ids[1:])
        saved = list((tmp_path / "played").glob("*.jsonl"))
        assert len(saved) == 1
        replay = read_replay(saved[0])
        assert replay.final is None  # cut short
        check_replay(replay)


def test_a_full_store_answers_503_until_a_game_is_idle(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path, max_games=1, idle_seconds=3600)) as c:
        first = c.post("/api/games", json={"seed": 1}).json()["id"]
        r = c.post("/api/games", json={"seed": 2})
        assert r.status_code == 503 and "--max-games" in r.json()["error"]
        assert c.get(f"/api/games/{first}").status_code == 200
        assert c.delete(f"/api/games/{first}").json()["abandoned"] is True
        assert c.post("/api/games", json={"seed": 2}).status_code == 201


def test_a_finished_game_makes_room_before_any_idle_one(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path, max_games=2, idle_seconds=3600)) as c:
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
    with TestClient(create_app(tmp_path)) as c:
        data = c.get("/api/replays/view", params={"path": "t/game.jsonl"}).json()
        assert len(data["frames"]) == len(data["steps"]) + 1
        assert all(h is not None for h in data["frames"][0]["hands"])
        annotated = [s for s in data["steps"] if s["annotations"]]
        assert annotated and all("text" in row for row in annotated[0]["annotations"]["values"])
        assert data["header"]["seed"] == "3"
        seat1 = c.get("/api/replays/view", params={"path": "t/game.jsonl", "seat": 1}).json()
        for frame in seat1["frames"]:
            assert [h is None for h in frame["hands"]] == [True, False, True, True]
        # a seat's view: not mc's values over its moves (they tell its tiles), nor the seed
        # (it deals every hand again); mc's own view keeps them
        assert all(step["annotations"] is None for step in seat1["steps"]) and seat1["header"]["seed"] is None
        up1 = c.post(
            "/api/replays/upload", params={"seat": 1}, content=(tmp_path / "t" / "game.jsonl").read_bytes()
        )
        assert up1.status_code == 200 and up1.json()["steps"] == seat1["steps"]
        seat0 = c.get("/api/replays/view", params={"path": "t/game.jsonl", "seat": 0}).json()
        assert [s["annotations"] for s in seat0["steps"]] == [s["annotations"] for s in data["steps"]]
        # the same file uploaded gives the same frames
        up = c.post("/api/replays/upload", content=(tmp_path / "t" / "game.jsonl").read_bytes())
        assert up.status_code == 200 and up.json()["frames"] == data["frames"]


def test_bad_replay_requests(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path.parent / "outside.jsonl").write_text("{}\n")
    with TestClient(create_app(tmp_path)) as c:
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
        r = c.post("/api/replays/upload", content=b"\xff\xfe")
        assert r.status_code == 400 and "UTF-8" in r.json()["error"]


def test_uploads_with_damaged_headers_or_odd_annotations_are_4xx_or_shown(tmp_path: Path) -> None:
    """Every upload is refused with a 4xx naming the damage, or shown: never a 500 (reset
    options the env refuses, JSON nested past Python's recursion limit, an annotation key
    that str.isdigit() calls a digit but int() refuses)."""
    tournament_style_replay(tmp_path / "game.jsonl")
    lines = (tmp_path / "game.jsonl").read_text().splitlines()
    header, first = json.loads(lines[0]), json.loads(lines[1])
    uploads = {
        "first player": [json.dumps({**header, "options": {"first_player": 9}}), *lines[1:]],
        "deal": [json.dumps({**header, "options": {"deal": 5}}), *lines[1:]],
        "nesting": [lines[0], "[" * 5000 + "]" * 5000, *lines[2:]],
        "annotation": [
            lines[0],
            json.dumps({**first, "annotations": {"values": {"\u00b2": 1.0}}}),
            *lines[2:],
        ],
    }
    with TestClient(create_app(tmp_path), raise_server_exceptions=False) as c:
        for kind, body in uploads.items():
            r = c.post("/api/replays/upload", content="\n".join(body) + "\n")
            assert r.status_code < 500, (kind, r.text)
            assert r.status_code == 200 if kind == "annotation" else "damaged replay" in r.json()["error"]


def test_a_replay_that_does_not_re_simulate_is_refused(tmp_path: Path) -> None:
    tournament_style_replay(tmp_path / "game.jsonl")
    lines = (tmp_path / "game.jsonl").read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["seed"] += 1
    (tmp_path / "game.jsonl").write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    with TestClient(create_app(tmp_path)) as c:
        r = c.get("/api/replays/view", params={"path": "game.jsonl"})
        assert r.status_code == 422 and "does not re-simulate" in r.json()["error"]


def test_a_client_that_disconnects_mid_request_leaves_the_game_whole(tmp_path: Path) -> None:
    import httpx

    with live_server(tmp_path) as (url, app):
        state = httpx.post(f"{url}/api/games", json={"seed": 9}).json()
        gid = state["id"]
        move = {"seat": state["seat"], "action": state["legal"][0]["action"], "step": state["step"]}
        body = json.dumps(move).encode()
        host, port = url.removeprefix("http://").split(":")
        head = f"POST /api/games/{gid}/move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        # 1. half a body, then gone
        with socket.create_connection((host, int(port))) as s:
            s.sendall((head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body[:5])
        # 2. a whole move, gone before the answer
        with socket.create_connection((host, int(port))) as s:
            s.sendall((head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        for _ in range(200):  # the second move is applied whole by its own thread
            r = httpx.get(f"{url}/api/games/{gid}")
            if r.status_code == 200 and r.json()["step"] > state["step"]:
                break
        after = r.json()
        assert after["step"] > state["step"]  # applied once, whole, and the lock is free
        game = app.state.store.get(gid)
        assert not game.lock.locked()
        assert game.recorder.replay.steps[state["step"]].action == move["action"]
        r = httpx.post(f"{url}/api/games/{gid}/move", json=move)
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
    root = Path(__file__).resolve().parents[1]
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
    static = Path(__file__).resolve().parents[1] / "agents" / "web" / "static"
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
            answers = list(pool.map(lambda _: httpx.post(target, json=move), range(8)))
        codes = sorted(r.status_code for r in answers)
        assert codes == [200] + [409] * 7, [r.text for r in answers]
        game = app.state.store.get(state["id"])
        human_steps = [s for s in game.recorder.replay.steps if s.seat == state["seat"]]
        assert len(human_steps) == 1


def test_shutting_down_saves_every_unfinished_game(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path)) as c:
        for seed in (1, 2):
            assert c.post("/api/games", json={"seed": seed}).status_code == 201
    saved = sorted((tmp_path / "played").glob("*.jsonl"))
    assert len(saved) == 2
    for path in saved:
        replay = read_replay(path)
        assert replay.final is None
        check_replay(replay)
