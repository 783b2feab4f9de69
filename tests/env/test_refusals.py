"""Refusals no other test reached (found by a branch-coverage run of the default suite).

Damaged files, bad snapshots and bad arguments, module by module: each test asserts the
exact refusal (its type, and the message naming the key or parameter and the rule) and,
where the code promises it, that nothing changed. Two of them found defects, now mended
(a file name too long for the file system; a bool action when the agents' ``Discrete``
spaces differ): each says what it was.
"""

from __future__ import annotations

import errno
import io
import json
import math
import os
import pickle
import sys
import types
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch as th
from gymnasium import spaces
from pettingzoo import AECEnv

import mtrain_env
import mtrain_env.block
from agents import policy_net
from agents.mexican_train import ppo
from agents.mexican_train.features import feature_size
from agents.mexican_train.league import SNAPSHOT, League, OpponentSpec, Snapshot
from agents.mexican_train.single_agent import ILLEGAL_MODES, SEAT_MODES, SingleAgentEnv
from agents.policy_format import FEATURE_SETS
from agents.policy_net import (
    GuardedMaskablePolicy,
    PolicyFileError,
    PolicySpec,
    build_policy,
    read_pickled_policy,
    read_policy,
    save_policy,
)
from agents.tournament.timing import TimingLedger
from mtrain_env.block.core.serialize import state_from_dict
from mtrain_env.block.core.state import CIERRE, DOMINO
from mtrain_env.mexican_train.compiled import cache
from mtrain_env.mexican_train.observation import ObservationLayout
from mtrain_env.replay import ReplayRecorder
from mtrain_env.replay_format import GAMES, game_name, make_env
from mtrain_env.tilegame import wrappers
from mtrain_env.tilegame.actions import ActionRangeError, ActionTypeError, coerce_action
from mtrain_env.tilegame.aec import rng_from_state
from mtrain_env.tilegame.snapshot import json_equal, req


def _block_env(seed: int = 0, finished: bool = False) -> Any:
    """A block raw env reset with ``seed``; ``finished``: played (random legal moves) to its end."""
    env = mtrain_env.block.raw_env()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while finished and not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
    return env


def _edited(env: Any, edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """A JSON copy of ``env``'s snapshot changed by ``edit``."""
    d = json.loads(json.dumps(env.state_dict()))
    edit(d)
    return d


def _refused(env: Any, bad: Any, kind: type[Exception], message: str) -> None:
    """``env.load_state_dict(bad)`` raises ``kind`` with exactly ``message``; ``env`` is unchanged."""
    before = env.state_dict()
    selection = env.agent_selection
    with pytest.raises(kind) as err:
        env.load_state_dict(bad)
    assert str(err.value) == message
    assert json_equal(env.state_dict(), before), "a refused snapshot changed the env"
    assert env.agent_selection == selection


# ------------------------------------------------------------------ agents/tournament/timing.py
# timing.jsonl is a measurement kept across invocations: a line that is not a timing entry is
# skipped with a warning naming file:line, and the totals are those of the good lines only.


def test_timing_ledger_without_a_file_times_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = TimingLedger(tmp_path / "timing.jsonl")
    timing = ledger.totals([0, 1, 2], agents=3)
    assert (timing.think_seconds, timing.decisions, timing.deals) == ([0.0] * 3, [0] * 3, 0)
    assert capsys.readouterr().err == ""


def test_timing_ledger_skips_foreign_lines_naming_each_and_totals_ignore_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = 2
    ledger = TimingLedger(tmp_path / "timing.jsonl")
    good = {0: ([0.5, 0.25], [3, 4]), 2: ([1, 2.5], [5, 6]), 7: ([9.0, 9.0], [9, 9])}
    wanted = [0, 2, 3]  # deal 3 is held by damaged lines only; deal 7 is not wanted

    def entry(**changes: Any) -> str:
        return json.dumps({"deal": 3, "think_seconds": [0.5, 0.5], "decisions": [1, 1], **changes})

    damaged = [
        "{not json",
        "[" * (sys.getrecursionlimit() * 4),  # JSON nested past the recursion limit
        json.dumps([3, [0.5, 0.5], [1, 1]]),  # JSON, not an object
        entry(deal=-1),
        entry(deal=True),
        entry(deal="3"),
        entry(think_seconds="0.5"),
        entry(decisions={"0": 1}),
        entry(think_seconds=[0.5]),  # one agent's worth, not two
        entry(decisions=[1, 1, 1]),
        entry(think_seconds=[-0.5, 0.5]),
        entry(think_seconds=[0.5, True]),
        entry(think_seconds=[0.5, "1"]),
        entry(think_seconds=[0.5, math.inf]),  # json.dumps writes Infinity, which json reads back
        entry(think_seconds=[math.nan, 0.5]),
        entry(decisions=[1, -1]),
        entry(decisions=[1, 1.0]),
        entry(decisions=[False, 1]),
    ]
    half = len(damaged) // 2
    batches = {0: damaged[:half], 2: damaged[half:], 7: []}  # the damaged lines after each good one
    numbers = []  # the line numbers of the damaged lines
    line = 0
    for deal, (seconds, decisions) in good.items():
        ledger.append(deal, seconds, decisions)
        line += 1
        with open(ledger.path, "a", encoding="utf-8") as f:
            for text in batches[deal]:
                f.write(text + "\n")
                line += 1
                numbers.append(line)
    with open(ledger.path, "a", encoding="utf-8") as f:  # the last line, cut short by a kill: no warning
        f.write(json.dumps({"deal": 2, "think_seconds": [100.0, 100.0], "decisions": [50, 50]})[:-3])

    timing = ledger.totals(wanted, agents)

    assert capsys.readouterr().err.splitlines() == [
        f"warning: {ledger.path}:{n}: not a timing entry, skipped" for n in numbers
    ]
    timed = [d for d in wanted if d in good]
    assert timing.deals == len(timed)
    assert timing.think_seconds == [sum(float(good[d][0][i]) for d in timed) for i in range(agents)]
    assert timing.decisions == [sum(good[d][1][i] for d in timed) for i in range(agents)]


# ---------------------------------------------------------- mtrain_env/block/core/serialize.py
# a block snapshot is read key by key: each refusal is 'state dict KEY: RULE: ...' and the env
# keeps its state. A finished hand gives a snapshot with one hand result to damage.


@pytest.fixture(scope="module")
def finished_block() -> Any:
    env = _block_env(finished=True)
    assert env.state_dict()["results"], "the hand played to its end has a result"
    return env


def _result(d: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = d["results"][0]
    return result


BLOCK_REFUSALS = [
    pytest.param(
        lambda d, n, top: d["results"].__setitem__(0, list(d["results"][0].values())),
        TypeError,
        "results[0]",
        "B10-B12",
        lambda n, top: "a hand's result is a dict, got list",
        id="result-not-a-dict",
    ),
    pytest.param(
        lambda d, n, top: _result(d).__setitem__("kind", "tranque"),
        ValueError,
        "results[0].kind",
        "B10",
        lambda n, top: f"must be {DOMINO!r} or {CIERRE!r}, got 'tranque'",
        id="result-kind",
    ),
    pytest.param(
        lambda d, n, top: _result(d).__setitem__("pips", sum(_result(d)["pips"])),
        TypeError,
        "results[0].pips",
        "B10",
        lambda n, top: f"must be a list of {n} ints, got int",
        id="result-pips-not-a-list",
    ),
    pytest.param(
        lambda d, n, top: _result(d)["pips"].append(0),
        ValueError,
        "results[0].pips",
        "B10",
        lambda n, top: f"must hold {n} ints, got {n + 1}",
        id="result-pips-too-many",
    ),
    pytest.param(
        lambda d, n, top: _result(d)["pair_pips"].__setitem__(0, -1),
        ValueError,
        "results[0].pair_pips[0]",
        "B10",
        lambda n, top: f"must be in 0..{top}, got -1",
        id="result-pair-pips-negative",
    ),
    pytest.param(
        lambda d, n, top: _result(d)["points"].__setitem__(1, top + 1),
        ValueError,
        "results[0].points[1]",
        "B12",
        lambda n, top: f"must be in 0..{top}, got {top + 1}",
        id="result-points-above-every-pip",
    ),
    pytest.param(
        lambda d, n, top: d["scores"].append(0),
        ValueError,
        "scores",
        "B13",
        lambda n, top: "must hold 2 ints, got 3",
        id="scores-three-teams",
    ),
    pytest.param(
        lambda d, n, top: d.__setitem__("scores", {"0": 0, "1": 0}),
        TypeError,
        "scores",
        "B13",
        lambda n, top: "must be a list of 2 ints, got dict",
        id="scores-not-a-list",
    ),
    pytest.param(
        lambda d, n, top: d["hands"].pop(),
        ValueError,
        "hands",
        "B3",
        lambda n, top: f"must hold {n} hands, got {n - 1}",
        id="hands-one-short",
    ),
    pytest.param(
        lambda d, n, top: d["played_by"].append([]),
        ValueError,
        "played_by",
        "B8",
        lambda n, top: f"must hold {n} lists, got {n + 1}",
        id="played-by-one-too-many",
    ),
    pytest.param(
        lambda d, n, top: d["voids"].pop(),
        ValueError,
        "voids",
        "B9",
        lambda n, top: f"must hold {n} lists, got {n - 1}",
        id="voids-one-short",
    ),
    pytest.param(
        lambda d, n, top: d["voids"].__setitem__(0, 3),
        TypeError,
        "voids[0]",
        "B9",
        lambda n, top: "must be a list of pip values, got int",
        id="voids-seat-not-a-list",
    ),
]


@pytest.mark.parametrize(("edit", "kind", "key", "rule", "says"), BLOCK_REFUSALS)
def test_a_damaged_block_snapshot_is_refused_naming_key_and_rule(
    finished_block: Any,
    edit: Callable[[dict[str, Any], int, int], None],
    kind: type[Exception],
    key: str,
    rule: str,
    says: Callable[[int, int], str],
) -> None:
    n = finished_block.game.n
    top = sum(finished_block.game.tiles.pips)  # every pip of the set
    bad = _edited(finished_block, lambda d: edit(d, n, top))
    _refused(finished_block, bad, kind, f"state dict {key!r}: {rule}: {says(n, top)}")


def test_block_state_from_dict_refuses_what_is_not_a_dict(finished_block: Any) -> None:
    items = list(finished_block.state_dict().items())
    with pytest.raises(TypeError) as err:
        state_from_dict(finished_block.game, items)
    assert str(err.value) == "a state dict must be a dict, got list"


# -------------------------------------------------------------- mtrain_env/tilegame/snapshot.py
# the shared readers: a key a reader is asked for must exist; the env section's RNG and
# round result are plain JSON of the right shape.


def test_req_names_a_missing_key_with_its_prefix() -> None:
    # every loader runs check_keys first, so only a direct call reaches this refusal
    with pytest.raises(ValueError) as err:
        req({"doubles": 0}, "tiles", int, "R18", "turn.")
    assert str(err.value) == "state dict 'turn.tiles': R18: missing"


def test_an_rng_state_that_is_not_a_dict_is_refused() -> None:
    env = _block_env()
    bad = _edited(env, lambda d: d["env"].__setitem__("rng", [d["env"]["rng"]]))
    message = "state dict 'env.rng': AEC: must be a dict, got list (not a numpy PCG64 bit-generator state)"
    _refused(env, bad, TypeError, message)


@pytest.mark.parametrize(
    ("round_result", "message"),
    [
        pytest.param(
            {1: "x"}, "state dict 'env.round_result': AEC: JSON keys are strings, got 1", id="int-key"
        ),
        pytest.param(
            {"hands": (1, 2)},
            "state dict 'env.round_result.hands': AEC: not a JSON value: tuple (1, 2)",
            id="tuple-value",
        ),
    ],
)
def test_a_round_result_that_is_not_plain_json_is_refused(round_result: dict[Any, Any], message: str) -> None:
    env = _block_env()
    bad = _edited(env, lambda d: None)
    bad["env"]["round_result"] = round_result  # a Python dict: load_state_dict does not need JSON text
    _refused(env, bad, TypeError, message)


# ------------------------------------------------------------------ mtrain_env/tilegame/aec.py
# the AEC adapter: an action refused before reset, PettingZoo's bookkeeping of a snapshot
# checked against its game state, and the soak's live check.


def test_check_action_before_reset_refuses_as_coerce_action_does() -> None:
    env = mtrain_env.block.raw_env()
    n = env.config.num_actions  # the action space is Discrete(n)
    for action, kind in (("x", ActionTypeError), (n, ActionRangeError), (-1, ActionRangeError)):
        with pytest.raises(kind) as expected:
            coerce_action(action, n)
        with pytest.raises(kind) as err:
            env.check_action(action)
        assert str(err.value) == str(expected.value)  # no agent on turn yet to name
        assert f"Discrete({n})" in str(err.value)


def test_rng_from_state_refuses_what_numpy_refuses() -> None:
    for state in ("PCG64", {"bit_generator": "MT19937", "state": {"key": [0], "pos": 0}}):
        try:
            np.random.default_rng().bit_generator.state = state  # type: ignore[assignment]
        except (TypeError, ValueError) as err:
            numpy_says = str(err)
        else:
            pytest.fail(f"numpy took {state!r}")
        with pytest.raises(ValueError) as refused:
            rng_from_state(state)
        assert str(refused.value) == f"not a numpy bit-generator state: {numpy_says}"


@pytest.mark.parametrize("stranger", ["player_9", 0, None])
def test_a_snapshot_listing_a_stranger_as_agent_is_refused(stranger: Any) -> None:
    env = _block_env()
    bad = _edited(env, lambda d: None)
    bad["env"]["agents"][-1] = stranger
    _refused(env, bad, ValueError, f"state dict 'env.agents': AEC: {stranger!r} is not an agent of this env")


def _drop_agent(e: dict[str, Any], agent: str) -> None:
    e["agents"].remove(agent)
    for book in ("rewards", "cumulative_rewards", "terminations", "truncations"):
        del e[book][agent]


def _all(e: dict[str, Any], book: str, value: bool) -> None:
    e[book] = dict.fromkeys(e["agents"], value)


def _truncated_not_terminated(e: dict[str, Any]) -> None:
    _all(e, "terminations", False)
    _all(e, "truncations", True)


BOOKKEEPING = [
    pytest.param(
        "gone",
        lambda e: e.__setitem__("skip_agent_selection", "player_0"),
        "env.skip_agent_selection",
        "no dead step is left to return from",
        id="skip-with-no-agent-left",
    ),
    pytest.param(
        "finished",
        lambda e: _all(e, "terminations", False),
        "env.terminations",
        "the episode is over: every agent is terminated",
        id="over-but-nobody-done",
    ),
    pytest.param(
        "fresh",
        lambda e: _drop_agent(e, e["agents"][-1]),
        "env.agents",
        "an agent leaves only by a dead step, once the episode ends",
        id="agent-gone-mid-episode",
    ),
    pytest.param(
        "finished",
        _truncated_not_terminated,
        "env.terminations",
        "the episode is over: every agent is terminated",
        id="over-but-truncated",
    ),
    pytest.param(
        "one-dead-step",
        lambda e: e.__setitem__("agent_selection", e["agents"][1]),
        "env.agent_selection",
        None,  # names the first agent left
        id="dead-steps-select-another",
    ),
    pytest.param(
        "one-dead-step",
        lambda e: e.__setitem__("skip_agent_selection", None),
        "env.agent_selection",
        None,
        id="dead-steps-forget-whom-to-return-to",
    ),
]


@pytest.mark.parametrize(("when", "edit", "key", "says"), BOOKKEEPING)
def test_bookkeeping_that_contradicts_the_game_is_refused(
    when: str, edit: Callable[[dict[str, Any]], Any], key: str, says: str | None
) -> None:
    env = _block_env(finished=when != "fresh")
    if when == "one-dead-step":
        env.step(None)
    while when == "gone" and env.agents:
        env.step(None)
    bad = _edited(env, lambda d: edit(d["env"]))
    if says is None:
        says = f"dead steps select the first agent left ({env.agents[0]})"
    _refused(env, bad, ValueError, f"state dict {key!r}: AEC: {says}")


def test_check_bookkeeping_names_each_lie_of_a_live_env(monkeypatch: pytest.MonkeyPatch) -> None:
    lies: list[tuple[Callable[[Any], None], str]] = [
        (
            lambda e: e.rewards.pop(e.agents[-1]),
            "'env.rewards': AEC: must map exactly the live agents {agents}",
        ),
        (
            lambda e: e._cumulative_rewards.__setitem__(e.agents[1], math.nan),
            "'env.cumulative_rewards.{second}': AEC: must be a finite number, got nan",
        ),
        (
            lambda e: e.terminations.__setitem__(e.agents[0], 0),
            "'env.terminations': AEC: must map exactly the live agents {agents} to bools",
        ),
        (
            lambda e: setattr(e, "_legal", e._legal[:-1]),
            "'current_player': AEC: cached legal moves {cached} are not the rules' {legal}",
        ),
    ]
    for lie, message in lies:
        env = _block_env()
        env.check_bookkeeping()  # the truth passes
        legal = env.game.legal_moves(env._state)
        lie(env)
        says = message.format(agents=env.agents, second=env.agents[1], cached=legal[:-1], legal=legal)
        with pytest.raises(ValueError) as err:
            env.check_bookkeeping()
        assert str(err.value) == f"state dict {says}"
    # rules that left the seat on turn without a move (a broken rules core): mask and cache agree
    env = _block_env()
    monkeypatch.setattr(env.game, "legal_moves", lambda s: [])
    env._legal, env._mask = [], env._zero_mask
    with pytest.raises(ValueError) as err:
        env.check_bookkeeping()
    assert str(err.value) == "state dict 'current_player': AEC: the seat on turn has no legal move"


def test_render_without_a_render_mode_warns_and_draws_nothing() -> None:
    env = _block_env()
    before = env.state_dict()
    with pytest.warns(UserWarning, match="You are calling render method without specifying any render mode"):
        assert env.render() is None
    assert json_equal(env.state_dict(), before)


# --------------------------------------------------------------- mtrain_env/tilegame/wrappers.py
# PettingZoo's three wrappers, rewritten: what they refuse on an env that is not ours (no
# check_action, no try_step, masks in infos or nowhere), and the refusals when used alone.


class _Toy(AECEnv):
    """Two agents, no ``check_action``/``try_step``; action spaces, observations and masks
    chosen by the test."""

    metadata = {"name": "toy_v0"}  # noqa: RUF012 - PettingZoo's class attribute

    def __init__(
        self, sizes: tuple[int, int] = (3, 3), observation: str = "dict", info_mask: bool = True
    ) -> None:
        super().__init__()
        self.possible_agents = ["a", "b"]
        self._spaces: dict[str, spaces.Discrete] = {
            a: spaces.Discrete(k) for a, k in zip(self.possible_agents, sizes, strict=True)
        }
        self._observation = observation
        self._info_mask = info_mask
        self.played: list[Any] = []

    def observation_space(self, agent: str) -> Any:
        return spaces.Box(0, 1, (4,), dtype=np.int8)

    def action_space(self, agent: str) -> Any:
        return self._spaces[agent]

    def _mask(self) -> np.ndarray:
        return np.array([1, 1, 0, 0], dtype=np.int8)  # actions 0 and 1 are legal

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: ({"action_mask": self._mask()} if self._info_mask else {}) for a in self.agents}
        self.agent_selection = "a"

    def observe(self, agent: str) -> Any:
        if self._observation == "dict":
            return {"action_mask": self._mask()}
        if self._observation == "dict-without-mask":
            return {"observation": np.zeros(4, dtype=np.int8)}
        return np.zeros(4, dtype=np.int8)

    def step(self, action: Any) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        self.played.append(action)
        self.agent_selection = "b" if self.agent_selection == "a" else "a"


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("TerminateIllegalWrapper", lambda env: wrappers.TerminateIllegalWrapper(env, illegal_reward=-1.0)),
        ("AssertOutOfBoundsWrapper", wrappers.AssertOutOfBoundsWrapper),
        ("OrderEnforcingWrapper", wrappers.OrderEnforcingWrapper),
    ],
)
def test_a_wrapper_refuses_what_is_not_an_aec_env(name: str, make: Callable[[Any], Any]) -> None:
    with pytest.raises(TypeError) as err:
        make(mtrain_env.block.raw_env)  # the class, not an env
    assert str(err.value) == f"{name} wraps AEC environments, got type"


def test_agents_with_different_spaces_are_checked_by_their_own_space() -> None:
    toy = _Toy(sizes=(3, 4))
    env = wrappers.wrap(toy)
    env.reset()
    for action in (3, -1):
        with pytest.raises(ActionRangeError) as err:
            env.step(action)
        assert str(err.value) == f"a: action {action} is outside the action space Discrete(3) (0 .. 2)"
    assert toy.played == [] and env.agent_selection == "a"
    env.step(1)
    env.step(np.int64(1))  # player b's space is Discrete(4): passed on as a Python int
    assert toy.played == [1, 1] and [type(a) for a in toy.played] == [int, int]
    assert env.agent_selection == "a"


def test_a_bool_action_is_refused_on_agents_with_different_spaces() -> None:
    """The module's promise (a bool is a ``TypeError``) holds when the agents' ``Discrete``
    spaces differ too: it was let through as 1 (``Discrete.contains(True)``), and the full
    stack failed on numpy's "truth value of an array is ambiguous"; a string was a
    ``ValueError``."""
    toy = _Toy(sizes=(3, 4))
    for make in (wrappers.wrap, wrappers.AssertOutOfBoundsWrapper):
        env = make(toy)
        env.reset()
        with pytest.raises(ActionTypeError, match=r"^a: action True \(bool\)"):
            env.step(True)
        with pytest.raises(ActionTypeError, match=r"^a: action 'x' \(str\)"):
            env.step("x")
        assert toy.played == []


def test_terminate_illegal_reads_the_mask_from_infos_of_a_plain_observation() -> None:
    toy = _Toy(observation="array", info_mask=True)
    env = wrappers.TerminateIllegalWrapper(toy, illegal_reward=-3.0)
    env.reset()
    env.step(1)
    assert toy.played == [1] and env.agent_selection == "b"
    env.step(2)  # illegal by b's info mask: the game ends, b gets the illegal reward
    assert toy.played == [1]
    assert all(env.terminations.values()) and all(env.truncations.values())
    assert env.rewards == {"a": 0, "b": -3.0}


@pytest.mark.parametrize(
    ("observation", "says"),
    [
        ("dict-without-mask", "`action_mask` not found in dictionary observation: "),
        ("array", "`action_mask` not found in info for non-dictionary observation: {}. "),
    ],
)
def test_terminate_illegal_refuses_an_env_that_gives_no_mask(observation: str, says: str) -> None:
    toy = _Toy(observation=observation, info_mask=False)
    env = wrappers.TerminateIllegalWrapper(toy, illegal_reward=-1.0)
    env.reset()
    with pytest.raises(KeyError) as err:
        env.step(0)
    assert err.value.args[0].startswith(says)
    assert err.value.args[0].endswith("to use TerminateIllegalWrapper.")
    assert toy.played == [] and env.agent_selection == "a" and not any(env.terminations.values())


def test_terminate_illegal_alone_checks_an_action_that_is_not_a_plain_int() -> None:
    raw = mtrain_env.block.raw_env()
    env = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1.0)
    env.reset(seed=3)
    before, agent = raw.state_dict(), raw.agent_selection
    with pytest.raises(ActionTypeError) as err:
        env.step("x")
    assert str(err.value).startswith(f"{agent}: action 'x' (str) is not in the action space")
    assert json_equal(raw.state_dict(), before)
    legal = raw.legal_actions()[0]
    env.step(np.int64(legal))  # a numpy int of a legal move is played
    assert not json_equal(raw.state_dict(), before)
    assert not any(raw.terminations.values())


def test_assert_out_of_bounds_alone_passes_a_plain_action_on_and_refuses_the_rest() -> None:
    raw = mtrain_env.block.raw_env()
    env = wrappers.AssertOutOfBoundsWrapper(raw)
    env.reset(seed=3)
    before, n = raw.state_dict(), raw.config.num_actions
    with pytest.raises(ActionRangeError, match=rf"^{raw.agent_selection}: action {n} is outside"):
        env.step(n)
    assert json_equal(raw.state_dict(), before)
    env.step(raw.legal_actions()[0])
    assert not json_equal(raw.state_dict(), before)


def test_last_with_no_agent_selected_is_refused() -> None:
    toy = _Toy()
    env = wrappers.wrap(toy)
    env.reset()
    toy.agent_selection = None  # type: ignore[assignment]
    with pytest.raises(AssertionError, match=r"^last\(\): no agent is selected$"):
        env.last()


def test_state_after_reset_is_the_envs_own_refusal() -> None:
    env = mtrain_env.block.env()
    env.reset(seed=0)
    with pytest.raises(NotImplementedError, match="state\\(\\) method has not been implemented"):
        env.state()


# ---------------------------------------------------------------------- mtrain_env/replay_format.py
# a replay is of one of this package's games, with a dict config and plain-JSON options and notes.


def test_game_name_refuses_an_env_of_another_package() -> None:
    with pytest.raises(TypeError) as err:
        game_name(_Toy())
    assert str(err.value) == "not an env of this package: _Toy"


def test_make_env_refuses_an_unknown_game_and_a_config_that_is_not_a_dict() -> None:
    with pytest.raises(ValueError) as err:
        make_env("chess", {})
    assert str(err.value) == f"game must be one of {GAMES}, got 'chess'"
    with pytest.raises(TypeError) as type_err:
        make_env(GAMES[1], [("num_players", 4)])  # type: ignore[arg-type]
    assert str(type_err.value) == "config must be a dict, got list"


def _json_refusal(value: Any) -> str:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as err:
        return str(err)
    pytest.fail(f"{value!r} is plain JSON")


def test_replay_options_and_annotations_must_be_plain_json() -> None:
    env = mtrain_env.block.raw_env()
    env.reset(seed=2)
    names = [f"seat{i}" for i in range(len(env.possible_agents))]
    nan_options = {"opener": math.nan}
    with pytest.raises(ValueError) as err:
        ReplayRecorder(env, seed=2, agents=names, options=nan_options)
    assert str(err.value) == f"options must be plain JSON values: {_json_refusal(nan_options)}"
    recorder = ReplayRecorder(env, seed=2, agents=names)
    seat, action = env.current_seat, env.legal_actions()[0]
    env.step(action)
    notes = {"probs": {1, 2}}
    with pytest.raises(ValueError) as err:
        recorder.record(seat, action, annotations=notes)
    assert str(err.value) == f"annotations must be plain JSON values: {_json_refusal(notes)}"
    assert recorder.replay.steps == []  # nothing recorded
    recorder.record(seat, action, annotations={"probs": {"1": 0.5}})
    assert len(recorder.replay.steps) == 1


# ------------------------------------------------------------------------------ agents/policy_net.py
# policy files hold data: a network a policy file cannot describe is refused before anything is
# written; SB3 archives and pickled policies that are not what they claim are refused naming the
# file and the part at fault.
SPEC = PolicySpec(observation_size=6, action_count=5, pi=(4,), vf=(3,), logit_bound=7.5)


def _constant(_progress: float) -> float:
    return 0.0


class _OtherExtractor(th.nn.Module):
    """A feature extractor that is not ``FlattenExtractor`` (SB3's constructor arguments)."""

    def __init__(self, observation_space: Any) -> None:
        super().__init__()
        self.features_dim = int(np.prod(observation_space.shape))

    def forward(self, obs: Any) -> Any:
        return obs.flatten(1)


def _plain_policy() -> Any:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    box = spaces.Box(-1, 1, (SPEC.observation_size,), dtype=np.float32)
    return MaskableActorCriticPolicy(box, spaces.Discrete(SPEC.action_count), _constant)


def _guarded(**kwargs: Any) -> Any:
    box = kwargs.pop("box", spaces.Box(-1, 1, (SPEC.observation_size,), dtype=np.float32))
    return GuardedMaskablePolicy(box, spaces.Discrete(SPEC.action_count), _constant, **kwargs)


@pytest.mark.parametrize(
    ("make", "says"),
    [
        pytest.param(
            _plain_policy,
            "policy files hold GuardedMaskablePolicy networks, got MaskableActorCriticPolicy",
            id="not-guarded",
        ),
        pytest.param(
            lambda: _guarded(box=spaces.Box(-1, 1, (2, 3), dtype=np.float32)),
            "policy files need a flat Box input and Discrete actions, got "
            f"{spaces.Box(-1, 1, (2, 3), dtype=np.float32)} and {spaces.Discrete(SPEC.action_count)}",
            id="2d-input",
        ),
        pytest.param(
            lambda: _guarded(features_extractor_class=_OtherExtractor),
            "policy files need the flatten feature extractor",
            id="other-extractor",
        ),
        pytest.param(
            lambda: _guarded(activation_fn=th.nn.ELU),
            "activation ELU has no name in policy files",
            id="elu",
        ),
    ],
)
def test_save_policy_refuses_a_network_no_policy_file_describes(
    tmp_path: Path, make: Callable[[], Any], says: str
) -> None:
    target = tmp_path / "p.npz"
    with pytest.raises(ValueError) as err:
        save_policy(make(), target)
    assert str(err.value) == says
    assert list(tmp_path.iterdir()) == []


def test_save_policy_refuses_a_network_changed_after_it_was_built(tmp_path: Path) -> None:
    net = build_policy(SPEC)
    net.value_net = th.nn.Linear(SPEC.vf[-1], 2)  # a two-headed critic: not the architecture's
    with pytest.raises(ValueError) as err:
        save_policy(net, tmp_path / "p.npz")
    assert str(err.value).startswith("the network's parameters are not those of its architecture PolicySpec(")
    assert list(tmp_path.iterdir()) == []


def _sb3_data(spec: PolicySpec, steps: int) -> dict[str, Any]:
    """The plain entries of SB3's ``data`` JSON for a ``GuardedMaskablePolicy`` model."""
    return {
        "policy_class": {":type:": "<class 'abc.ABCMeta'>", "__module__": "agents.policy_net"},
        "policy_kwargs": {
            "net_arch": {"pi": list(spec.pi), "vf": list(spec.vf)},
            "logit_bound": spec.logit_bound,
            "features": spec.features,
            "ortho_init": spec.ortho_init,
        },
        "observation_space": {
            ":type:": "<class 'gymnasium.spaces.box.Box'>",
            "dtype": "float32",
            "_shape": [spec.observation_size],
        },
        "action_space": {
            ":type:": "<class 'gymnasium.spaces.discrete.Discrete'>",
            "n": str(spec.action_count),
            "start": "0",
        },
        "num_timesteps": steps,
    }


def _pth(state: Any) -> bytes:
    buf = io.BytesIO()
    th.save(state, buf)
    return buf.getvalue()


def _archive(path: Path, data: Any, pth: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", json.dumps(data))
        zf.writestr("policy.pth", pth)
    return path


def test_a_well_formed_sb3_archive_is_read(tmp_path: Path) -> None:
    """The archive the refusals below damage, read as it is."""
    net = build_policy(SPEC)
    path = _archive(tmp_path / "model.zip", _sb3_data(SPEC, 64), _pth(net.state_dict()))
    spec, steps, weights = policy_net.read_sb3_archive(path)
    assert (spec, steps) == (SPEC, 64)
    assert list(weights) == list(SPEC.parameter_shapes())
    assert policy_net.policy_spec(read_policy(path)) == SPEC


def _state(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    state = {k: v.clone() for k, v in build_policy(SPEC).state_dict().items()}
    change(state)
    return state


SB3_REFUSALS = [
    pytest.param(lambda d: [d], None, "data: not a JSON object", id="data-a-list"),
    pytest.param(
        lambda d: {k: v for k, v in d.items() if k != "observation_space"},
        None,
        "data: observation_space is not a gymnasium Box",
        id="no-observation-space",
    ),
    pytest.param(
        lambda d: {**d, "action_space": {**d["observation_space"]}},
        None,
        "data: action_space is not a gymnasium Discrete",
        id="box-actions",
    ),
    pytest.param(
        lambda d: {**d, "observation_space": {**d["observation_space"], "dtype": "float64"}},
        None,
        f"data: observation_space must be a flat float32 Box, got shape {[SPEC.observation_size]!r}",
        id="float64-input",
    ),
    pytest.param(
        lambda d: {**d, "action_space": {**d["action_space"], "start": "1"}},
        None,
        f"data: action_space must be Discrete(n) from 0, got n='{SPEC.action_count}' start='1'",
        id="actions-from-1",
    ),
    pytest.param(
        lambda d: {**d, "num_timesteps": -1},
        None,
        "data: num_timesteps must be an int >= 0, got -1",
        id="negative-timesteps",
    ),
    pytest.param(
        lambda d: d,
        lambda: list(build_policy(SPEC).state_dict().values()),
        "policy.pth: not a state dict of tensors",
        id="pth-a-list",
    ),
    pytest.param(
        lambda d: d,
        lambda: _state(lambda s: s.__setitem__("action_net.bias", s["action_net.bias"].tolist())),
        "policy.pth: not a state dict of tensors",
        id="pth-a-list-among-tensors",
    ),
    pytest.param(
        lambda d: d,
        lambda: _state(lambda s: s.__setitem__("action_net.bias", th.zeros(SPEC.action_count - 1))),
        f"policy.pth: parameter action_net.bias has shape ({SPEC.action_count - 1},), "
        f"the architecture says ({SPEC.action_count},)",
        id="pth-wrong-shape",
    ),
    pytest.param(
        lambda d: d,
        lambda: _state(lambda s: s.__setitem__("extra.weight", th.zeros(1))),
        "policy.pth: parameter extra.weight has shape (1,), the architecture says None",
        id="pth-extra-parameter",
    ),
    pytest.param(
        lambda d: d,
        lambda: _state(lambda s: s.__setitem__("action_net.bias", s["action_net.bias"].double())),
        "policy.pth: action_net.bias is not finite float32",
        id="pth-float64",
    ),
    pytest.param(
        lambda d: d,
        lambda: _state(lambda s: s["value_net.bias"].fill_(math.nan)),
        "policy.pth: value_net.bias is not finite float32",
        id="pth-nan",
    ),
]


@pytest.mark.parametrize(("data_change", "state", "says"), SB3_REFUSALS)
def test_a_damaged_sb3_archive_is_refused_naming_file_and_part(
    tmp_path: Path,
    data_change: Callable[[dict[str, Any]], Any],
    state: Callable[[], Any] | None,
    says: str,
) -> None:
    pth = _pth(state() if state is not None else build_policy(SPEC).state_dict())
    path = _archive(tmp_path / "model.zip", data_change(_sb3_data(SPEC, 64)), pth)
    with pytest.raises(PolicyFileError) as err:
        read_policy(path)
    assert (err.value.path, err.value.message) == (str(path), says)
    assert str(err.value) == f"{path}: {says}"


class _LooksUpAnother:
    """Pickles as ``getattr(BasePolicy, "predict")``: a lookup SB3's policy.save never writes."""

    def __reduce__(self) -> tuple[Any, ...]:
        from stable_baselines3.common.policies import BasePolicy

        return (getattr, (BasePolicy, "predict"))


@pytest.mark.parametrize(
    ("saved", "says"),
    [
        pytest.param(
            lambda: {"data": {"lr_schedule": _LooksUpAnother()}, "state_dict": {}},
            "not a policy pickled by SB3's policy.save (the file looks up 'predict' on "
            "<class 'stable_baselines3.common.policies.BasePolicy'>, which a policy never does)",
            id="getattr-of-another-name",
        ),
        pytest.param(
            lambda: [{"data": {}, "state_dict": {}}],
            "not a policy pickled by SB3's policy.save (no data and state_dict)",
            id="a-list",
        ),
        pytest.param(
            lambda: {"data": {"ortho_init": True}, "state_dict": {}},
            "activation None is not one of tanh, relu",
            id="no-activation",
        ),
        pytest.param(
            lambda: {"data": {"activation_fn": th.nn.Tanh}, "state_dict": {}},
            "does not build a policy (TypeError: MaskableActorCriticPolicy.__init__() missing 3 required "
            "positional arguments: 'observation_space', 'action_space', and 'lr_schedule')",
            id="no-spaces",
        ),
    ],
)
def test_a_pickled_policy_that_is_not_policy_save_output_is_refused(
    tmp_path: Path, saved: Callable[[], Any], says: str
) -> None:
    path = tmp_path / "saved.pt"
    th.save(saved(), path)
    with pytest.raises(PolicyFileError) as err:
        read_pickled_policy(path)
    assert (err.value.path, err.value.message) == (str(path), says)


def test_upgrade_command_refuses_a_destination_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "saved.pt"
    build_policy(SPEC).save(str(src))  # SB3's policy.save: a pickle
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    # a name the directory takes, whose hidden temporary twin (atomic write) is too long
    dst = tmp_path / ("p" * (name_max - len(".npz") - 2) + ".npz")
    assert policy_net.main([str(src), str(dst)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("python -m agents.policy_net: ") and err.count("\n") == 1
    assert dst.name in err and os.strerror(errno.ENAMETOOLONG) in err
    assert sorted(tmp_path.iterdir()) == [src]  # nothing written, no temporary file left
    good = tmp_path / "ok.npz"
    assert policy_net.main([str(src), str(good)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {good}: ")
    assert policy_net.policy_spec(read_policy(good)) == policy_net.policy_spec(read_pickled_policy(src))


def test_upgrade_command_refuses_a_destination_name_too_long(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A name longer than the file system allows: one line, exit 2, nothing written (it was
    an ``OSError`` traceback: ``Path.is_dir`` raises ENAMETOOLONG in ``output_problem``,
    which every command's output check calls)."""
    from mtrain_env.tilegame.argtypes import output_problem

    src = tmp_path / "saved.pt"
    build_policy(SPEC).save(str(src))
    dst = tmp_path / ("p" * os.pathconf(tmp_path, "PC_NAME_MAX") + ".npz")
    too_long = f"cannot use {dst} ({os.strerror(errno.ENAMETOOLONG)})"
    assert output_problem(dst) == output_problem(dst, "directory") == too_long
    assert policy_net.main([str(src), str(dst)]) == 2
    err = capsys.readouterr().err
    assert err == f"python -m agents.policy_net: DST: {too_long}\n"
    assert sorted(tmp_path.iterdir()) == [src]


# ----------------------------------------------------------------------- agents/mexican_train/ppo.py
# the ppo agent: a policy file naming an unknown feature set is refused (and not cached); an
# observation or a table the policy was not trained for is refused naming both; an empty mask
# has no action to pick.


@pytest.fixture
def no_cached_policies() -> Any:
    ppo.clear_cache()
    yield
    ppo.clear_cache()


def test_a_policy_file_with_an_unknown_feature_set_is_refused(
    tmp_path: Path, no_cached_policies: None
) -> None:
    path = tmp_path / "p.npz"
    save_policy(
        build_policy(
            PolicySpec(
                observation_size=6, action_count=5, pi=(4,), vf=(3,), features="odd", observation_version=1
            )
        ),
        path,
    )
    with pytest.raises(PolicyFileError) as err:
        ppo.load_policy(path)
    assert str(err.value) == f"{path}: feature set 'odd' is not one of {', '.join(FEATURE_SETS)}"
    assert str(path.resolve()) not in ppo._CACHE


def test_ppo_refuses_an_observation_of_another_shape() -> None:
    net = build_policy(SPEC)
    agent = ppo.PPOAgent(policy=net, path="in-memory")
    assert agent.logits(np.zeros(SPEC.observation_size, dtype=np.float32)).shape == (SPEC.action_count,)
    wrong = SPEC.observation_size + 1
    with pytest.raises(ValueError) as err:
        agent.logits(np.zeros(wrong, dtype=np.float32))
    assert str(err.value) == (
        f"policy in-memory expects observations of shape ({SPEC.observation_size},), got ({wrong},) "
        "(it was trained on another game configuration)"
    )


def test_ppo_refuses_a_table_its_feature_set_does_not_fit() -> None:
    config = mtrain_env.raw_env(num_players=2, max_pips=6).config
    spec = PolicySpec(observation_size=6, action_count=5, pi=(4,), vf=(3,), features="planner")
    agent = ppo.PPOAgent(policy=build_policy(spec), path="in-memory")
    size = feature_size("planner", config, ObservationLayout(config).size)
    with pytest.raises(ValueError) as err:
        agent.check_game(config)
    assert str(err.value) == (
        f"policy in-memory was trained for another table (6 inputs, 5 actions); this game has {size} and "
        f"{config.num_actions} ({config.num_players} players, double-{config.max_pips})"
    )


@pytest.mark.parametrize(
    "pick",
    [ppo.masked_argmax, lambda x, m: ppo.masked_sample(x, m, np.random.default_rng(0))],
    ids=["argmax", "sample"],
)
def test_an_empty_mask_has_no_action_to_pick(pick: Callable[[np.ndarray, np.ndarray], int]) -> None:
    logits = np.arange(4, dtype=np.float32)
    mask = np.zeros(4, dtype=np.int8)
    with pytest.raises(ValueError, match=r"^no legal action in the mask$"):
        pick(logits, mask)
    mask[1] = 1
    assert pick(logits, mask) == 1


# -------------------------------------------------------------- agents/mexican_train/single_agent.py
# the Gymnasium wrapper: seat and illegal_action values it cannot use; snapshot opponents need the
# league's directory.
SMALL = {"num_players": 2, "max_pips": 6}


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"seat": "first"}, f"seat must be one of {SEAT_MODES} or a seat index, got 'first'"),
        (
            {"seat": SMALL["num_players"]},
            f"seat must be 0..{SMALL['num_players'] - 1}, got {SMALL['num_players']}",
        ),
        ({"seat": -1}, f"seat must be 0..{SMALL['num_players'] - 1}, got -1"),
        ({"illegal_action": "ignore"}, f"illegal_action must be one of {ILLEGAL_MODES}, got 'ignore'"),
    ],
)
def test_single_agent_env_refuses_a_seat_or_illegal_mode_it_cannot_use(
    kwargs: dict[str, Any], says: str
) -> None:
    with pytest.raises(ValueError) as err:
        SingleAgentEnv(env_kwargs=SMALL, **kwargs)
    assert str(err.value) == says


def test_snapshot_opponents_without_a_league_root_are_refused() -> None:
    league = League(
        {"random": 1.0}, p_heuristic=1e-12, p_latest=1.0, p_older=0.0, snapshots=[Snapshot(0, "s.npz")]
    )
    env = SingleAgentEnv(env_kwargs=SMALL, opponents=league)
    with pytest.raises(ValueError, match=r"^snapshot opponents need a league_root$"):
        env.reset(seed=0)
    plain, other = SingleAgentEnv(env_kwargs=SMALL), SingleAgentEnv(env_kwargs=SMALL)
    plain.reset(seed=0)
    other.reset(seed=1)
    state = other.get_state()
    state["opponent_specs"] = dict.fromkeys(state["opponent_specs"], OpponentSpec(SNAPSHOT, "s.npz"))
    before = pickle.dumps(plain.get_state())
    with pytest.raises(ValueError, match=r"^snapshot opponents need a league_root$"):
        plain.set_state(state)
    assert pickle.dumps(plain.get_state()) == before  # refused before any change (was: half loaded)


def test_single_agent_render_without_a_render_mode_warns() -> None:
    env = SingleAgentEnv(env_kwargs=SMALL)
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render\\(\\) called without a render_mode"):
        assert env.render() is None


# --------------------------------------------------------- mtrain_env/mexican_train/compiled/cache.py
# the cache locator declines what it does not watch, and caching is declined (False) when numba's
# private caching API is not the one expected.


def _fake_caching(with_impl: bool) -> Any:
    class _CacheLocator:
        pass

    class Found:
        asked: list[tuple[Any, str]] = []  # noqa: RUF012 - a record of the calls

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            cls.asked.append((py_func, py_file))
            return None

    impl = types.SimpleNamespace(_locator_classes=[Found]) if with_impl else None
    return types.SimpleNamespace(_CacheLocator=_CacheLocator, CacheImpl=impl, Found=Found)


def test_the_watching_locator_declines_unwatched_files_and_files_no_base_locates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    caching = _fake_caching(with_impl=True)
    locator = cache._locator_class(caching, [caching.Found])
    watched_file = str(tmp_path / "kernels.py")
    monkeypatch.setitem(cache._WATCHED, watched_file, (str(tmp_path / "rules.py"),))
    assert locator.from_function(len, str(tmp_path / "elsewhere.py")) is None
    assert caching.Found.asked == []  # an unwatched file: the base locators are not asked
    assert locator.from_function(len, watched_file) is None
    assert caching.Found.asked == [(len, watched_file)]


@pytest.mark.parametrize("broken", ["no CacheImpl", "no locator classes", "no _CacheLocator"])
def test_caching_is_declined_when_numbas_private_api_differs(
    monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    caching = _fake_caching(with_impl=broken != "no CacheImpl")
    if broken == "no locator classes":
        caching.CacheImpl._locator_classes = []
    if broken == "no _CacheLocator":
        del caching._CacheLocator
    locators = None if caching.CacheImpl is None else list(caching.CacheImpl._locator_classes)
    monkeypatch.setitem(sys.modules, "numba.core", types.SimpleNamespace(caching=caching))
    monkeypatch.setattr(cache, "_WATCHED", {})
    assert cache.cache_watching("/x/kernels.py", "/x/rules.py") is False
    assert cache._WATCHED == {}  # nothing registered
    if locators is not None:
        assert caching.CacheImpl._locator_classes == locators  # no locator inserted
    # the same fake with the API complete is taken: the refusal above was the API's doing
    whole = _fake_caching(with_impl=True)
    monkeypatch.setitem(sys.modules, "numba.core", types.SimpleNamespace(caching=whole))
    assert cache.cache_watching("/x/kernels.py", "/x/rules.py") is True
    assert cache._WATCHED == {"/x/kernels.py": ("/x/rules.py",)}
    assert [c.__name__ for c in whole.CacheImpl._locator_classes] == ["_WatchingLocator", "Found"]
