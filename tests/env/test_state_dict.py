"""Snapshots: ``state_dict`` / ``load_state_dict`` and pickling restore a game exactly.

A snapshot is JSON; loading it into a FRESH env (or unpickling the env) and continuing
both copies with the same actions gives identical observations, rewards, terminations and
later round deals (the RNG is part of the snapshot, R25 sessions). A corrupt snapshot
raises ``ValueError``/``TypeError`` naming the problem and leaves the env untouched.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import mtrain_env
from mtrain_env.mexican_train.core.state import Phase
from tests.backends import BACKENDS

CONFIGS = [
    pytest.param({"rounds": 3}, id="pagat-session3"),
    pytest.param({"rounds": 3, "num_players": 2, "max_pips": 6}, id="pagat-2p-d6-session3"),
    pytest.param({"rules": "cardinal", "rounds": 3, "num_players": 3}, id="cardinal-session3"),
    pytest.param({"rules": "wikipedia", "rounds": 2, "reward": "win"}, id="wikipedia-win"),
    pytest.param(
        {"rounds": 3, "blank_penalty": True, "positive_scoring": True, "reward": "penalty"},
        id="scoring-variants",
    ),
    pytest.param({"max_pips": 15, "num_players": 7, "satisfy_in_reverse_order": True}, id="d15-reverse"),
]


def snapshot_trace(env: Any, actions_rng: np.random.Generator, limit: int = 100_000) -> list[Any]:
    """Play random legal actions to the end; return everything observable at each step."""
    trace: list[Any] = []
    steps = 0
    while not all(env.unwrapped.terminations.values()) and steps < limit:
        agent = env.agent_selection
        legal = env.unwrapped.legal_actions()
        action = int(actions_rng.choice(legal))
        env.step(action)
        steps += 1
        u = env.unwrapped
        trace.append(
            (
                agent,
                action,
                env.agent_selection,
                {a: u.observe(a)["observation"].tobytes() for a in u.possible_agents},
                {a: u.observe(a)["action_mask"].tobytes() for a in u.possible_agents},
                dict(u.rewards),
                dict(u._cumulative_rewards),
                dict(u.terminations),
                dict(u.truncations),
                u.state_obj.round_index,
                json.dumps(u.state_dict()["hands"]),  # later deals come from the saved RNG
            )
        )
    return trace


def advance(env: Any, rng: np.random.Generator, steps: int) -> None:
    for _ in range(steps):
        if all(env.unwrapped.terminations.values()):
            return
        env.step(int(rng.choice(env.unwrapped.legal_actions())))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kwargs", CONFIGS)
@pytest.mark.parametrize("cut", [0, 1, 7, 40, 120])
def test_json_round_trip_continues_identically(kwargs: dict[str, Any], cut: int, backend: str) -> None:
    """JSON snapshot -> fresh env -> same future (observations, rewards, deals of later rounds)."""
    env = mtrain_env.raw_env(backend=backend, **kwargs)
    env.reset(seed=2024)
    advance(env, np.random.default_rng(1), cut)
    snap = env.state_dict()
    text = json.dumps(snap)  # must be JSON-serializable as is (no numpy scalars)
    fresh = mtrain_env.raw_env(backend=backend, **kwargs)
    fresh.load_state_dict(json.loads(text))
    assert fresh.state_dict() == json.loads(text)
    assert fresh.agent_selection == env.agent_selection
    for a in env.possible_agents:
        np.testing.assert_array_equal(fresh.observe(a)["observation"], env.observe(a)["observation"])
        np.testing.assert_array_equal(fresh.observe(a)["action_mask"], env.observe(a)["action_mask"])
    a = snapshot_trace(env, np.random.default_rng(99))
    b = snapshot_trace(fresh, np.random.default_rng(99))
    assert a == b
    if kwargs.get("rounds", 1) > 1 and cut < 40:
        assert a[-1][9] == kwargs["rounds"] - 1, "the continuation should reach later rounds"


def test_load_into_reset_env_and_never_reset_env() -> None:
    """Loading works into a never-reset env and over a different, already running game."""
    env = mtrain_env.raw_env(rounds=2)
    env.reset(seed=5)
    advance(env, np.random.default_rng(5), 30)
    snap = json.loads(json.dumps(env.state_dict()))
    other = mtrain_env.raw_env(rounds=2)
    other.reset(seed=6)
    advance(other, np.random.default_rng(6), 11)
    other.load_state_dict(snap)
    never = mtrain_env.raw_env(rounds=2)
    never.load_state_dict(snap)
    assert other.state_dict() == never.state_dict() == env.state_dict()
    ta = snapshot_trace(env, np.random.default_rng(3))
    tb = snapshot_trace(other, np.random.default_rng(3))
    tc = snapshot_trace(never, np.random.default_rng(3))
    assert ta == tb == tc


def test_state_dict_lists_the_documented_fields() -> None:
    """The documented snapshot fields exist with the documented shapes (env docstring)."""
    env = mtrain_env.raw_env(num_players=3)
    env.reset(seed=0)
    d = env.state_dict()
    for k in ("hands", "boneyard", "engine", "trains", "mexican_train", "markers", "pending_doubles"):
        assert k in d
    for k in ("current_player", "round", "scores"):
        assert k in d
    assert len(d["hands"]) == 3 and len(d["trains"]) == 3 and len(d["markers"]) == 3
    assert d["current_player"] == env.current_seat
    assert d["engine"] == [12, 12]
    # boneyard is listed top first: the next DRAW takes boneyard[0] (R8)
    while env.legal_actions() != [env.DRAW] and env.DRAW not in env.legal_actions():
        env.step(env.legal_actions()[0])
        if env.state_obj.phase >= Phase.ROUND_OVER:
            pytest.skip("no draw happened in this game")
    top = env.state_dict()["boneyard"][0]
    seat = env.current_seat
    before = env.state_dict()["hands"][seat]
    env.step(env.DRAW)
    after = env.state_dict()["hands"][seat]
    assert sorted(map(tuple, after)) == sorted([*map(tuple, before), tuple(top)])


@pytest.mark.parametrize(
    "make", [pytest.param(mtrain_env.raw_env, id="raw_env"), pytest.param(mtrain_env.env, id="env")]
)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cut", [0, 25])
def test_pickle_continues_identically(make: Callable[..., Any], cut: int, backend: str) -> None:
    """pickle.dumps/loads of the env (bare and wrapped) continues the same game, RNG included."""
    env = make(rounds=3, num_players=3, backend=backend)
    env.reset(seed=77)
    advance(env, np.random.default_rng(77), cut)
    clone = pickle.loads(pickle.dumps(env))
    assert clone.unwrapped.state_dict() == env.unwrapped.state_dict()
    a = snapshot_trace(env, np.random.default_rng(4))
    b = snapshot_trace(clone, np.random.default_rng(4))
    assert a == b
    assert a[-1][9] == 2  # went on through the later rounds dealt by the pickled RNG


def test_pickle_of_unreset_env() -> None:
    """A never-reset env pickles and can then be reset like a new one."""
    env = mtrain_env.raw_env(num_players=5)
    clone = pickle.loads(pickle.dumps(env))
    clone.reset(seed=1)
    env.reset(seed=1)
    assert clone.state_dict() == env.state_dict()


# ----------------------------------------------------------------------- corrupt dicts
def _base() -> tuple[Any, dict[str, Any]]:
    """A 4-seat game in its normal phase with started trains and a non-empty boneyard."""
    env = mtrain_env.raw_env(rounds=2)
    env.reset(seed=31)
    rng = np.random.default_rng(31)
    while env.state_obj.phase != Phase.NORMAL or sum(map(len, env.state_obj.trains)) < 6:
        env.step(int(rng.choice(env.legal_actions())))
    return env, env.state_dict()


def _first_train(d: dict[str, Any]) -> int:
    return next(i for i, tr in enumerate(d["trains"]) if len(tr) >= 2)


def _corruptions() -> list[Any]:
    """(name, function mutating a deep copy of a valid snapshot)."""

    def drop(k: str) -> Callable[[dict[str, Any]], None]:
        return lambda d: d.pop(k)

    def dup_tile(d: dict[str, Any]) -> None:
        d["boneyard"].append(list(d["hands"][0][0]))

    def missing_tile(d: dict[str, Any]) -> None:
        d["boneyard"].pop()

    def hand_tile_missing(d: dict[str, Any]) -> None:
        d["hands"][1].pop()

    def broken_chain(d: dict[str, Any]) -> None:
        tr = d["trains"][_first_train(d)]
        tr[0], tr[1] = tr[1], tr[0]

    def flipped_tile(d: dict[str, Any]) -> None:
        tr = d["trains"][_first_train(d)]
        if tr[0][0] == tr[0][1]:
            tr[1] = tr[1][::-1]
        else:
            tr[0] = tr[0][::-1]

    def bad_pending(d: dict[str, Any]) -> None:
        # a train whose end is not a double cannot be an unsatisfied double (R20)
        t = next(i for i, tr in enumerate(d["trains"]) if tr and tr[-1][0] != tr[-1][1])
        d["pending_doubles"] = [t]

    def pending_bad_ref(d: dict[str, Any]) -> None:
        d["pending_doubles"] = ["nowhere"]

    def pending_out_of_range(d: dict[str, Any]) -> None:
        d["pending_doubles"] = [4]

    def wrong_current(d: dict[str, Any]) -> None:
        d["current_player"] = (d["current_player"] + 1) % 4

    def current_out_of_range(d: dict[str, Any]) -> None:
        d["current_player"] = 4

    def current_str(d: dict[str, Any]) -> None:
        d["current_player"] = "1"

    def other_config(d: dict[str, Any]) -> None:
        d["config"] = mtrain_env.raw_env(num_players=4, rounds=2, blank_penalty=True).config.to_dict()

    def other_reward(d: dict[str, Any]) -> None:
        d["env"]["reward_mode"] = "win"

    def hands_not_list(d: dict[str, Any]) -> None:
        d["hands"] = "oops"

    def hand_tile_str(d: dict[str, Any]) -> None:
        d["hands"][0][0] = "6-6"

    def tile_out_of_range(d: dict[str, Any]) -> None:
        d["boneyard"][0] = [13, 0]

    def too_few_hands(d: dict[str, Any]) -> None:
        d["hands"].pop()

    def markers_ints(d: dict[str, Any]) -> None:
        d["markers"] = [0, 0, 0, 0]

    def markers_short(d: dict[str, Any]) -> None:
        d["markers"] = d["markers"][:3]

    def phase_unknown(d: dict[str, Any]) -> None:
        d["phase"] = "DANCING"

    def round_out_of_range(d: dict[str, Any]) -> None:
        d["round"] = 5

    def engine_wrong(d: dict[str, Any]) -> None:
        d["engine"] = [11, 11]

    def scores_mismatch(d: dict[str, Any]) -> None:
        d["scores"] = [1.0, 0.0, 0.0, 0.0]

    def scores_strings(d: dict[str, Any]) -> None:
        d["scores"] = ["0", "0", "0", "0"]

    def format_version(d: dict[str, Any]) -> None:
        d["format"] = 999

    def rng_garbage(d: dict[str, Any]) -> None:
        d["env"]["rng"] = {"bit_generator": "Nope"}

    def agent_selection(d: dict[str, Any]) -> None:
        d["env"]["agent_selection"] = "player_9"

    def env_section_missing(d: dict[str, Any]) -> None:
        d.pop("env")

    def not_a_dict(d: dict[str, Any]) -> None:
        d.clear()

    def turn_bad(d: dict[str, Any]) -> None:
        d["turn"]["owes"] = "yes"

    def voids_bad(d: dict[str, Any]) -> None:
        d["voids"][0] = [99]

    def engine_in_hand(d: dict[str, Any]) -> None:
        d["hands"][0].append([12, 12])

    out = [pytest.param(drop(k), id=f"missing-{k}") for k in _base_keys()]
    for f in (
        dup_tile,
        missing_tile,
        hand_tile_missing,
        broken_chain,
        flipped_tile,
        bad_pending,
        pending_bad_ref,
        pending_out_of_range,
        wrong_current,
        current_out_of_range,
        current_str,
        other_config,
        other_reward,
        hands_not_list,
        hand_tile_str,
        tile_out_of_range,
        too_few_hands,
        markers_ints,
        markers_short,
        phase_unknown,
        round_out_of_range,
        engine_wrong,
        scores_mismatch,
        scores_strings,
        format_version,
        rng_garbage,
        agent_selection,
        env_section_missing,
        not_a_dict,
        turn_bad,
        voids_bad,
        engine_in_hand,
    ):
        out.append(pytest.param(f, id=f.__name__.replace("_", "-")))
    return out


def _base_keys() -> list[str]:
    return sorted(_base()[1])


@pytest.mark.parametrize("corrupt", _corruptions())
def test_corrupt_state_dict_is_rejected_and_changes_nothing(
    corrupt: Callable[[dict[str, Any]], None],
) -> None:
    """Every corruption raises ValueError/TypeError; the env keeps its exact state (R1, R7, R15, R20)."""
    env, good = _base()
    bad = copy.deepcopy(good)
    corrupt(bad)
    assert json.dumps(bad) != json.dumps(good)
    before = env.state_dict()
    obs_before = {a: env.observe(a)["observation"].copy() for a in env.possible_agents}
    with pytest.raises((ValueError, TypeError)) as err:
        env.load_state_dict(bad)
    assert str(err.value), "the error must say what is wrong"
    assert env.state_dict() == before
    for a in env.possible_agents:
        np.testing.assert_array_equal(env.observe(a)["observation"], obs_before[a])
    # and the env still plays on
    env.step(env.legal_actions()[0])


def test_non_dict_snapshot_is_a_type_error() -> None:
    env, _ = _base()
    before = env.state_dict()
    for bad in (None, [], "state", 3):
        with pytest.raises(TypeError):
            env.load_state_dict(bad)  # type: ignore[arg-type]
    assert env.state_dict() == before


def test_corrupt_dict_into_fresh_env_leaves_it_unusable_but_unchanged() -> None:
    """A fresh env refuses a corrupt snapshot and stays un-reset (no half-loaded state)."""
    _, good = _base()
    bad = copy.deepcopy(good)
    bad["hands"][0].append(list(bad["hands"][1][0]))
    fresh = mtrain_env.raw_env(rounds=2)
    with pytest.raises(ValueError):
        fresh.load_state_dict(bad)
    with pytest.raises(RuntimeError):
        fresh.state_dict()


def test_round_trip_at_game_over() -> None:
    """A snapshot of a finished episode loads as finished: all terminated, masks zero (R25)."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, rounds=2)
    env.reset(seed=12)
    advance(env, np.random.default_rng(12), 100_000)
    assert all(env.terminations.values())
    fresh = mtrain_env.raw_env(num_players=2, max_pips=6, rounds=2)
    fresh.load_state_dict(json.loads(json.dumps(env.state_dict())))
    assert fresh.state_dict() == env.state_dict()
    assert all(fresh.terminations.values())
    assert fresh.state_obj.phase == Phase.GAME_OVER
    for a in fresh.possible_agents:
        assert not fresh.observe(a)["action_mask"].any()
    assert fresh._cumulative_rewards == env._cumulative_rewards


def test_round_trip_while_seeking_the_engine() -> None:
    """engine_holder_opens (R5): a snapshot taken while seats draw for the engine continues the same."""
    for seed in range(50):
        env = mtrain_env.raw_env(rules="cardinal", num_players=2, max_pips=6, rounds=3)
        env.reset(seed=seed)
        if env.state_obj.phase == Phase.SEEK_ENGINE:
            break
    else:
        pytest.fail("no deal left the engine in the boneyard")
    snap = json.loads(json.dumps(env.state_dict()))
    assert snap["engine"] in snap["boneyard"]
    fresh = mtrain_env.raw_env(rules="cardinal", num_players=2, max_pips=6, rounds=3)
    fresh.load_state_dict(snap)
    assert snapshot_trace(env, np.random.default_rng(1)) == snapshot_trace(fresh, np.random.default_rng(1))
