"""Fuzzing the web table's endpoints with malformed and adversarial requests (hypothesis).

Wrong game ids, moves that are illegal, stale or for another seat, wrong types, unknown
keys, random bytes, path traversal: each gets a 4xx whose body says why, the game is
unchanged (its full state and its replay), and the server answers afterwards. The
TestClient re-raises any server error, so a 500 fails the test.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.web.app import create_app
from tests.web_server import TableClient

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("fuzz")
    with TableClient(create_app(root, max_games=4)) as client:
        state = client.post("/api/games", json={"seed": 21, "agents": ["planner", "greedy", "random"]}).json()
        yield client, state


def snapshot(client: Any, game_id: str) -> str:
    game = client.app.state.store.get(game_id)
    return json.dumps([game.env.state_dict(), len(game.recorder.replay.steps)], sort_keys=True)


def refused(r: Any) -> None:
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    message = r.json()["error"]
    assert isinstance(message, str) and message


@FUZZ
@given(body=json_values)
def test_any_move_body_is_refused_whole(server: Any, body: Any) -> None:
    client, state = server
    before = snapshot(client, state["id"])
    r = client.post(f"/api/games/{state['id']}/move", json=body)
    refused(r)
    assert snapshot(client, state["id"]) == before


@FUZZ
@given(seat=st.integers(-3, 12), action=st.integers(-5, 2000), step=st.integers(-2, 400))
def test_wrong_seats_actions_and_steps_are_refused(server: Any, seat: int, action: int, step: int) -> None:
    client, state = server
    legal = {m["action"] for m in state["legal"]}
    if seat == state["seat"] and step == state["step"] and action in legal:
        action = -1  # the one valid move would change the game: keep it refused
    before = snapshot(client, state["id"])
    r = client.post(f"/api/games/{state['id']}/move", json={"seat": seat, "action": action, "step": step})
    refused(r)
    assert snapshot(client, state["id"]) == before


@FUZZ
@given(game_id=st.text(max_size=40), method=st.sampled_from(["GET", "DELETE", "POST"]))
def test_wrong_game_ids(server: Any, game_id: str, method: str) -> None:
    client, state = server
    if game_id == state["id"]:
        return
    before = snapshot(client, state["id"])
    path = "/api/games/" + quote(game_id, safe="")
    r = client.request(
        method, path + ("/move" if method == "POST" else ""), json={"seat": 0, "action": 0, "step": 0}
    )
    assert 400 <= r.status_code < 500, r.text
    assert snapshot(client, state["id"]) == before


@FUZZ
@given(body=json_values)
def test_any_new_game_body_is_refused_or_makes_a_valid_game(server: Any, body: Any) -> None:
    client, _state = server
    r = client.post("/api/games", json=body)
    if r.status_code == 201:  # a valid request (e.g. {}): a real game, then dropped
        assert client.delete(f"/api/games/{r.json()['id']}").status_code == 200
    else:
        refused(r)


@FUZZ
@given(raw=st.binary(max_size=300))
def test_random_bytes(server: Any, raw: bytes) -> None:
    client, state = server
    before = snapshot(client, state["id"])
    headers = {"content-type": "application/json"}
    refused(client.post(f"/api/games/{state['id']}/move", content=raw, headers=headers))
    r = client.post("/api/games", content=raw, headers=headers)
    if r.status_code == 201:
        client.delete(f"/api/games/{r.json()['id']}")
    else:
        refused(r)
    refused(client.post("/api/replays/upload", content=raw))
    assert snapshot(client, state["id"]) == before


@FUZZ
@given(
    path=st.text(max_size=60)
    | st.sampled_from(["../x.jsonl", "/etc/passwd", "..%2F..%2Fx.jsonl", "a/../../b.jsonl"])
)
def test_replay_paths(server: Any, path: str) -> None:
    client, _state = server
    refused(client.get("/api/replays/view", params={"path": path}))


def test_the_server_is_still_up_and_the_game_still_plays(server: Any) -> None:
    client, state = server
    assert client.get("/api/options").status_code == 200
    move = state["legal"][0]
    r = client.post(
        f"/api/games/{state['id']}/move",
        json={"seat": state["seat"], "action": move["action"], "step": state["step"]},
    )
    assert r.status_code == 200 and r.json()["step"] > state["step"]
