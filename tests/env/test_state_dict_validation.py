"""``load_state_dict`` validates everything (issue 15 items 3 and 4): the audit's repros as tests.

Each inconsistent snapshot the audit loaded is now refused with ``ValueError``/``TypeError``
worded ``state dict 'KEY': RULE: ...``, and the env keeps its exact previous state. The
``env`` section is checked key by key and against the game state; the RNG is range-checked
before numpy sees it; PettingZoo's ``_skip_agent_selection`` is part of the snapshot, so a
restored copy selects the same agents through the dead steps.
"""

from __future__ import annotations

import copy
import json
import math
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import mtrain_env
import mtrain_env.block
from mtrain_env.block.core import invariants as block_invariants
from mtrain_env.mexican_train.core import invariants as mexican_invariants
from mtrain_env.mexican_train.core.serialize import state_to_dict
from mtrain_env.mexican_train.core.state import Phase
from mtrain_env.tilegame.snapshot import json_equal

#: every refusal: the key, then the rule (R.., B.., a range of them, or AEC for PettingZoo's bookkeeping)
MESSAGE = re.compile(r"^state dict '(?P<key>[^']+)': (?P<rule>(?:[RB]\d+(?:-[RB]\d+)?|AEC)): ")


def play_until(env: Any, stop: Callable[[Any], bool], seed: int, limit: int = 20_000) -> bool:
    """Random legal steps until ``stop(env)``; False if the episode ended first."""
    rng = np.random.default_rng(seed)
    for _ in range(limit):
        if stop(env):
            return True
        if all(env.terminations.values()):
            return False
        env.step(int(rng.choice(env.legal_actions())))
    return False


def find(make: Callable[[], Any], stop: Callable[[Any], bool], seeds: int = 60) -> Any:
    """An env of ``make()`` played (over several seeds if needed) to a state where ``stop`` holds."""
    for seed in range(seeds):
        env = make()
        env.reset(seed=seed)
        if play_until(env, stop, seed):
            return env
    pytest.fail("no seeded game reached the wanted state")


def assert_refused(env: Any, bad: dict[str, Any], key: str | None = None, rule: str | None = None) -> str:
    """``load_state_dict(bad)`` raises a worded error naming ``key``/``rule``; ``env`` is unchanged."""
    before = env.state_dict()
    observations = {a: env.observe(a)["observation"].copy() for a in env.possible_agents}
    selection, infos = env.agent_selection, {a: dict(i) for a, i in env.infos.items()}
    with pytest.raises((ValueError, TypeError)) as err:
        env.load_state_dict(bad)
    message = str(err.value)
    found = MESSAGE.match(message)
    assert found, f"not worded 'state dict KEY: RULE: ...': {message}"
    if key is not None:
        assert found["key"] == key, message
    if rule is not None:
        assert found["rule"] == rule, message
    assert json_equal(env.state_dict(), before), "a refused snapshot changed the env"
    assert env.agent_selection == selection
    assert env.infos.keys() == infos.keys()
    for a in env.possible_agents:
        np.testing.assert_array_equal(env.observe(a)["observation"], observations[a])
    return message


def edited(env: Any, edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    d = json.loads(json.dumps(env.state_dict()))
    edit(d)
    return d


def mexican(**kwargs: Any) -> Callable[[], Any]:
    return lambda: mtrain_env.raw_env(**kwargs)


def in_normal_phase(env: Any) -> bool:
    s = env.state_obj
    return s.phase == Phase.NORMAL and sum(map(len, s.trains)) >= 6


# ------------------------------------------------------------------- the env section
def test_a_single_truncation_is_refused() -> None:
    """The audit: ``truncations['player_0'] = True`` loaded, then ``step`` raised a bare KeyError."""
    env = find(mexican(), in_normal_phase)
    bad = edited(env, lambda d: d["env"]["truncations"].__setitem__("player_0", True))
    assert_refused(env, bad, "env.truncations", "AEC")
    env.step(env.legal_actions()[0])  # the env still plays


def test_a_snapshot_from_before_skip_agent_selection_was_saved_loads_with_none_pending() -> None:
    """Snapshots written before the key existed (e.g. inside older training checkpoints)
    still load: no dead step pending, which is what a running episode has."""
    env = find(mexican(), in_normal_phase)
    d = env.state_dict()
    assert d["env"]["skip_agent_selection"] is None
    old = copy.deepcopy(d)
    del old["env"]["skip_agent_selection"]
    restored = mtrain_env.raw_env()
    restored.load_state_dict(old)
    assert restored.state_dict() == d


@pytest.mark.parametrize("value", ["abc", None, True, 1, math.nan, math.inf])
def test_cumulative_rewards_must_be_finite_floats(value: Any) -> None:
    """The audit: a cumulative reward ``"abc"`` loaded and ``last()`` returned it."""
    env = find(mexican(), in_normal_phase)
    bad = edited(env, lambda d: d["env"]["cumulative_rewards"].__setitem__("player_1", value))
    assert_refused(env, bad, "env.cumulative_rewards.player_1", "AEC")


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda e: e.__setitem__("extra", 1), "env.extra"),
        (lambda e: e.__setitem__("agents", ["player_1", "player_0", "player_2", "player_3"]), "env.agents"),
        (lambda e: e.__setitem__("agents", ["player_0", "player_0", "player_2", "player_3"]), "env.agents"),
        (lambda e: e.__setitem__("agents", ["player_0", "player_1", "player_2"]), "env.rewards"),
        (lambda e: e["terminations"].__setitem__("player_2", 1), "env.terminations.player_2"),
        (lambda e: e["rewards"].pop("player_3"), "env.rewards"),
        (lambda e: e.__setitem__("agent_selection", "player_9"), "env.agent_selection"),
        (lambda e: e.__setitem__("skip_agent_selection", 0), "env.skip_agent_selection"),
        (lambda e: e.__setitem__("round_result", [1]), "env.round_result"),
        (lambda e: e.__setitem__("round_result", {"scores": [math.nan]}), "env.round_result.scores[0]"),
        (lambda e: e.__setitem__("reward_mode", "win"), "env.reward_mode"),
        (lambda e: e.__setitem__("env", None), "env.env"),
    ],
)
def test_every_key_of_the_env_section_is_checked(edit: Callable[[dict[str, Any]], None], key: str) -> None:
    env = find(mexican(), in_normal_phase)
    assert_refused(env, edited(env, lambda d: edit(d["env"])), key, "AEC")


def test_the_agent_on_turn_must_be_selected() -> None:
    env = find(mexican(), in_normal_phase)
    other = f"player_{(env.current_seat + 1) % 4}"
    assert_refused(
        env, edited(env, lambda d: d["env"].__setitem__("agent_selection", other)), "env.agent_selection"
    )


@pytest.mark.parametrize(
    ("path", "value", "key"),
    [
        (("state", "state"), 2**200, "env.rng.state.state"),
        (("state", "state"), -1, "env.rng.state.state"),
        (("state", "inc"), 2**128 + 1, "env.rng.state.inc"),
        (("state", "inc"), 2, "env.rng.state.inc"),
        (("uinteger",), 2**32, "env.rng.uinteger"),
        (("has_uint32",), 2, "env.rng.has_uint32"),
        (("has_uint32",), True, "env.rng.has_uint32"),
        (("bit_generator",), "MT19937", "env.rng.bit_generator"),
        (("state", "state"), 1.5, "env.rng.state.state"),
    ],
)
def test_rng_integers_are_range_checked_naming_the_key(path: tuple[str, ...], value: Any, key: str) -> None:
    """The audit: an out-of-range RNG integer gave a bare ``OverflowError`` that named no key."""
    env = find(mexican(), in_normal_phase)

    def edit(d: dict[str, Any]) -> None:
        node = d["env"]["rng"]
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value

    message = assert_refused(env, edited(env, edit), key, "AEC")
    assert "bit-generator" in message


# ---------------------------------------------------------------- the game state
def test_round_over_mid_session_is_refused() -> None:
    """The audit: ``ROUND_OVER`` mid-session loaded; the seat on turn had an all-zero mask.

    Here a state the rules core does reach (a round just scored, the next not dealt) is
    refused by the env, which deals the next round in the step that ends one.
    """
    env = mtrain_env.raw_env(num_players=2, max_pips=6, rounds=3)
    env.reset(seed=4)
    s = env.state_obj.copy()
    rng = np.random.default_rng(4)
    while s.phase < Phase.ROUND_OVER:
        s_moves = env.game.legal_moves(s)
        env.game.apply(s, s_moves[int(rng.integers(len(s_moves)))])
    assert s.phase == Phase.ROUND_OVER
    mexican_invariants.check_state(env.game, s)  # consistent for the rules core ...
    bad = state_to_dict(env.game, s)
    bad["env"] = env.state_dict()["env"]
    assert_refused(env, bad, "phase", "AEC")  # ... but never an env's state
    plain = edited(env, lambda d: d.__setitem__("phase", "ROUND_OVER"))
    assert_refused(env, plain)


def test_game_over_mid_session_is_refused() -> None:
    env = find(mexican(rounds=3), in_normal_phase)
    bad = edited(env, lambda d: d.__setitem__("phase", "GAME_OVER"))
    assert_refused(env, bad, "phase", "R25")


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, 0.0])
def test_nan_scores_are_refused(value: float) -> None:
    """The audit: ``scores = [nan] * 4`` loaded and the observation left its space (R24)."""
    env = find(mexican(positive_scoring=True, rounds=2), lambda e: bool(e.state_obj.round_scores))
    message = assert_refused(env, edited(env, lambda d: d.__setitem__("scores", [value] * 4)))
    # a finite zero is a score, but not the sum of the round's scores
    assert message.startswith("state dict 'scores[") and ("R25" if value == 0.0 else "R24") in message


def test_a_pending_double_keeps_its_duty() -> None:
    """The audit: ``turn.tiles = 1`` with a double pending lifted the R20 duty (1 legal move became 3)."""

    def pending_at_turn_start(e: Any) -> bool:
        s = e.state_obj
        return s.phase == Phase.NORMAL and bool(s.pending) and not s.tiles_this_turn and not s.has_drawn

    env = find(mexican(num_players=3, max_pips=9), pending_at_turn_start)

    def one_tile(d: dict[str, Any]) -> None:
        d["turn"]["tiles"] = 1

    assert_refused(env, edited(env, one_tile), "turn.tiles", "R18")

    def one_double(d: dict[str, Any]) -> None:  # consistent counters: still refused, by R20
        d["turn"].update(tiles=1, doubles=1, owes=True)

    assert_refused(env, edited(env, one_double), rule="R18")

    def not_obliged(d: dict[str, Any]) -> None:
        d["turn"]["obliged"] = False

    assert_refused(env, edited(env, not_obliged), "turn.obliged", "R20")


def test_a_draw_is_only_claimed_when_the_drawn_tile_is_the_only_play() -> None:
    """R16: a seat that has drawn plays the drawn tile or nothing; ``voids`` then come back from
    ``pre_draw_voids``, so a false ``has_drawn`` would later show a void in a pip it holds."""

    def many_plays(e: Any) -> bool:
        s = e.state_obj
        tiles = {m // e.game.width for m in e.game.legal_moves(s) if m < e.game.draw}
        return s.phase == Phase.NORMAL and not s.tiles_this_turn and len(tiles) >= 2

    env = find(mexican(num_players=3), many_plays)
    assert_refused(env, edited(env, lambda d: d["turn"].__setitem__("has_drawn", True)), rule="R16")

    def drew(e: Any) -> bool:
        return e.state_obj.has_drawn and e.state_obj.phase == Phase.NORMAL

    env = find(mexican(num_players=3), drew)
    seat = env.current_seat

    def lacks_everything(d: dict[str, Any]) -> None:
        d["pre_draw_voids"][seat] = list(range(13))

    if len(env.state_dict()["hands"][seat]) >= 2:
        assert_refused(env, edited(env, lacks_everything), f"pre_draw_voids[{seat}]", "R16")
    assert_refused(env, edited(env, lambda d: d["voids"].__setitem__(seat, [12])), f"voids[{seat}]", "R16")


def test_voids_that_contradict_a_hand_are_refused() -> None:
    env = find(mexican(), in_normal_phase)

    def void_in_own_pip(d: dict[str, Any]) -> None:
        d["voids"][2] = sorted({d["hands"][2][0][0]})

    assert_refused(env, edited(env, void_in_own_pip), "voids[2]", "R16")


def test_an_empty_hand_mid_round_is_refused() -> None:
    """The audit: an opponent with an empty hand mid-round loaded (R19 ends the round)."""
    env = find(mexican(), in_normal_phase)
    opponent = (env.current_seat + 1) % 4

    def empty(d: dict[str, Any]) -> None:
        d["boneyard"].extend(d["hands"][opponent])
        d["hands"][opponent] = []
        d["voids"][opponent] = []

    assert_refused(env, edited(env, empty), f"hands[{opponent}]", "R19")


def test_the_mexican_train_is_not_started_during_the_opening() -> None:
    """The audit: a Mexican train started during the opening loaded (R9)."""

    def opening_with_an_engine_tile(e: Any) -> bool:
        s = e.state_obj
        engine = s.engine
        return s.phase == Phase.OPENING and any(
            engine in t for p, h in enumerate(e.state_dict()["hands"]) if p != s.current for t in h
        )

    env = find(mexican(), opening_with_an_engine_tile)

    def start_it(d: dict[str, Any]) -> None:
        engine = d["engine"][0]
        p, tile = next(
            (p, t) for p, h in enumerate(d["hands"]) if p != d["current_player"] for t in h if engine in t
        )
        d["hands"][p].remove(tile)
        d["mexican_train"] = [[engine, tile[1] if tile[0] == engine else tile[0]]]
        d["history_len"] += 1

    assert_refused(env, edited(env, start_it), "mexican_train", "R9")


def test_seek_engine_needs_engine_holder_opens() -> None:
    """The audit: ``SEEK_ENGINE`` loaded under pagat, a phase only ``engine_holder_opens`` uses (R5)."""
    env = mtrain_env.raw_env(num_players=3)
    env.reset(seed=1)

    def seek(d: dict[str, Any]) -> None:
        d["phase"] = "SEEK_ENGINE"
        d["engine_placed"] = False
        d["boneyard"].append(list(d["engine"]))

    assert_refused(env, edited(env, seek), "phase", "R5")


@pytest.mark.parametrize(
    ("edit", "key", "rule"),
    [
        (lambda d: d["first_turn_done"].__setitem__(0, False), "first_turn_done", "R9"),
        (lambda d: d.__setitem__("history_len", 0), "history_len", "R15"),
        (lambda d: d.__setitem__("blocked", True), "blocked", "R23"),
        (lambda d: d.__setitem__("round", 1), "engine", "R5"),
        (lambda d: d["turn"].__setitem__("owes", not d["turn"]["owes"]), "turn.owes", "R18"),
        (lambda d: d.__setitem__("first_player_forced", 1), "first_player_forced", "R6"),
        (lambda d: d.__setitem__("extra", []), "extra", "R1-R25"),
        (lambda d: d.__setitem__("format", True), "format", "R1-R25"),
        (lambda d: d["config"].__setitem__("num_players", 4.0), "config", "R1-R4"),
        (lambda d: d["hands"][0].append(list(d["hands"][0][0])), "hands[0][15]", "R1"),
        (lambda d: d["hands"][0].__setitem__(0, (1, 2)), "hands[0][0]", "R1"),
        (lambda d: d["voids"].__setitem__(1, [3, 3]), "voids[1]", "R16"),
    ],
)
def test_more_inconsistent_states_are_refused(
    edit: Callable[[dict[str, Any]], None], key: str, rule: str
) -> None:
    env = find(mexican(rounds=2), in_normal_phase)
    assert len(env.state_dict()["hands"][0]) == 15 or key != "hands[0][15]"
    assert_refused(env, edited(env, edit), key, rule)


def test_block_states_are_checked_against_the_rules() -> None:
    env = find(
        lambda: mtrain_env.block.raw_env(match=True, target=60),
        lambda e: e.state_obj.hand_index >= 1 and len(e.state_obj.line) >= 2,
    )
    cases: list[tuple[Callable[[dict[str, Any]], None], str, str]] = [
        (lambda d: d["results"][0].__setitem__("points", [0, 0]), "results[0]", "B10-B12"),
        (lambda d: d.__setitem__("opener", (d["opener"] + 1) % 4), "opener", "B6"),
        (lambda d: d.__setitem__("moves", 10_000), "moves", "B9"),
        (lambda d: d.__setitem__("phase", "GAME_OVER"), "results", "B13"),
        (lambda d: d.__setitem__("tiebreak", True), "tiebreak", "B13"),
        (lambda d: d.__setitem__("match_loser", 0), "match_loser", "B13"),
        (lambda d: d.__setitem__("redeals", -1), "redeals", "B4"),
        (lambda d: d["results"][0].__setitem__("tie", 0), "results[0].tie", "B11"),
    ]
    for edit, key, rule in cases:
        assert_refused(env, edited(env, edit), key, rule)
    block_invariants.check_state(env.game, env.state_obj)


# ------------------------------------------------------- the AEC bookkeeping, exactly
def _dead_step_selections(env: Any) -> list[str]:
    """Dead-step the episode's end through; the agent selected before and after each step."""
    seen = [env.agent_selection]
    while env.agents:
        env.step(None)
        seen.append(env.agent_selection)
    return seen


@pytest.mark.parametrize("wrapped", [False, True], ids=["game over", "illegal move (wrapper)"])
def test_dead_steps_select_the_same_agents_after_a_restore(wrapped: bool) -> None:
    """The audit: ``_skip_agent_selection`` was not saved, so after the last dead step a restored
    copy selected a different agent. Restored at every dead step, a copy follows the original."""
    for seed in range(3):
        env = (mtrain_env.env if wrapped else mtrain_env.raw_env)(num_players=4)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        if wrapped:
            for _ in range(30):
                env.step(int(rng.choice(env.unwrapped.legal_actions())))
            legal = env.unwrapped.legal_actions()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                env.step(next(a for a in range(env.unwrapped._num_actions) if a not in legal))
        else:
            play_until(env, lambda e: all(e.terminations.values()), seed)
        raw = env.unwrapped
        assert all(raw.terminations.values())
        reference = copy.deepcopy(raw)
        expected = _dead_step_selections(reference)
        assert expected[-1] == raw.possible_agents[raw.current_seat]
        for k in range(len(expected) - 1):
            snap = json.loads(json.dumps(raw.state_dict()))
            copy_ = mtrain_env.raw_env(num_players=4)
            copy_.load_state_dict(snap)
            assert json_equal(copy_.state_dict(), snap)
            assert _dead_step_selections(copy_) == expected[k:], f"restored before dead step {k}"
            raw.step(None)
        assert raw.agents == [] and raw.agent_selection == expected[-1]


def test_a_reset_after_unfinished_dead_steps_snapshots_exactly() -> None:
    """An env reset before its dead steps were done keeps PettingZoo's leftover skip: saved as is."""
    env = mtrain_env.env(num_players=3, max_pips=6)
    env.reset(seed=2)
    legal = env.unwrapped.legal_actions()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(next(a for a in range(env.unwrapped._num_actions) if a not in legal))
    env.reset(seed=3)
    d = env.unwrapped.state_dict()
    copy_ = mtrain_env.raw_env(num_players=3, max_pips=6)
    copy_.load_state_dict(json.loads(json.dumps(d)))
    assert json_equal(copy_.state_dict(), d)


def test_reset_forgets_the_last_episodes_dead_step_memory() -> None:
    """PettingZoo keeps the agent its dead steps return to in ``_skip_agent_selection``; a
    reset after an illegal move ended an episode mid-dead-steps starts from none pending."""
    env = mtrain_env.env(num_players=3)
    env.reset(seed=2)
    illegal = next(
        a
        for a in range(len(env.unwrapped.observe_mask(env.agent_selection)))
        if not env.unwrapped.observe_mask(env.agent_selection)[a]
    )
    env.step(illegal)  # TerminateIllegalWrapper ends the game for everyone
    env.step(None)  # one dead step: PettingZoo remembers where to return
    env.reset(seed=2)
    raw = env.unwrapped
    assert raw._skip_agent_selection is None
    assert raw.state_dict()["env"]["skip_agent_selection"] is None
