"""Bad input fails loudly and changes nothing.

* every config keyword out of range or of the wrong type -> ``ValueError``/``TypeError``
  naming the keyword, before any play (R1, R3, R4, R25, variants);
* malformed fixed deals -> ``ValueError``/``TypeError``, the env untouched (R1, R3, R5);
* actions outside ``Discrete(num_actions)`` or of the wrong type -> ``ValueError``/``TypeError``;
* illegal actions on ``raw_env`` -> ``ValueError`` naming the rule broken (R-id or variant)
  and listing the legal actions; the state is unchanged;
* on ``env()`` an illegal in-range action follows PettingZoo's ``TerminateIllegalWrapper``
  convention (offender -1, game over); an out-of-space one raises as on ``raw_env`` (the
  full table of bad actions, also under ``python -O``: ``tests/env/test_bad_actions.py``).
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import mtrain_env
from mtrain_env.mexican_train.core.config import VARIANT_FLAGS
from mtrain_env.mexican_train.core.state import Phase

CONSTRUCTORS = [pytest.param(mtrain_env.raw_env, id="raw_env"), pytest.param(mtrain_env.env, id="env")]


# ------------------------------------------------------------------------------ config
BAD_CONFIGS = [
    pytest.param({"num_players": 1}, ValueError, "num_players", id="players-1"),
    pytest.param({"num_players": 9}, ValueError, "num_players", id="players-9-d12"),
    pytest.param({"num_players": 0}, ValueError, "num_players", id="players-0"),
    pytest.param({"num_players": "4"}, TypeError, "num_players", id="players-str"),
    pytest.param({"num_players": 4.0}, TypeError, "num_players", id="players-float"),
    pytest.param({"num_players": True}, TypeError, "num_players", id="players-bool"),
    pytest.param({"num_players": None}, TypeError, "num_players", id="players-none"),
    pytest.param({"max_pips": 15, "num_players": 15}, ValueError, "num_players", id="players-15-d15"),
    pytest.param({"max_pips": 5}, ValueError, "max_pips", id="pips-5"),
    pytest.param({"max_pips": 19}, ValueError, "max_pips", id="pips-19"),
    pytest.param({"max_pips": -1}, ValueError, "max_pips", id="pips-neg"),
    pytest.param({"max_pips": "12"}, TypeError, "max_pips", id="pips-str"),
    pytest.param({"max_pips": 12.0}, TypeError, "max_pips", id="pips-float"),
    pytest.param({"max_pips": False}, TypeError, "max_pips", id="pips-bool"),
    pytest.param({"hand_size": 0}, ValueError, "hand_size", id="hand-0"),
    pytest.param({"hand_size": -1}, ValueError, "hand_size", id="hand-neg"),
    pytest.param({"hand_size": 23}, ValueError, "R4", id="hand-too-big-4p"),  # 92 > 90 dealable
    pytest.param({"num_players": 2, "max_pips": 6, "hand_size": 14}, ValueError, "R4", id="hand-too-big-d6"),
    pytest.param({"hand_size": "5"}, TypeError, "hand_size", id="hand-str"),
    pytest.param({"hand_size": 5.0}, TypeError, "hand_size", id="hand-float"),
    pytest.param({"rules": "nope"}, ValueError, "nope", id="rules-unknown"),
    pytest.param({"rules": "chicken_foot"}, ValueError, "chicken_foot", id="rules-chicken-foot"),
    pytest.param({"rules": "PAGAT"}, ValueError, "PAGAT", id="rules-case"),
    pytest.param({"rules": 3}, TypeError, "rules", id="rules-int"),
    pytest.param({"rules": None}, TypeError, "rules", id="rules-none"),
    pytest.param({"no_such_flag": True}, (TypeError, ValueError), "no_such_flag", id="flag-unknown"),
    pytest.param({"chicken_foot": True}, (TypeError, ValueError), "chicken_foot", id="flag-chicken-foot"),
    pytest.param({"rounds": 0}, ValueError, "rounds", id="rounds-0"),
    pytest.param({"rounds": 14}, ValueError, "rounds", id="rounds-14-d12"),
    pytest.param({"rounds": 8, "max_pips": 6}, ValueError, "rounds", id="rounds-8-d6"),
    pytest.param({"rounds": -2}, ValueError, "rounds", id="rounds-neg"),
    pytest.param({"rounds": "3"}, TypeError, "rounds", id="rounds-str"),
    pytest.param({"rounds": 2.0}, TypeError, "rounds", id="rounds-float"),
    pytest.param({"reward": "x"}, ValueError, "reward", id="reward-x"),
    pytest.param({"reward": None}, (TypeError, ValueError), "reward", id="reward-none"),
    pytest.param({"render_mode": "x"}, ValueError, "render_mode", id="render-x"),
    pytest.param({"render_mode": "rgb"}, ValueError, "render_mode", id="render-rgb"),
]
for _flag in VARIANT_FLAGS:
    BAD_CONFIGS.append(pytest.param({_flag: 1}, TypeError, _flag, id=f"{_flag}-int"))
    BAD_CONFIGS.append(pytest.param({_flag: "yes"}, TypeError, _flag, id=f"{_flag}-str"))


@pytest.mark.parametrize("make", CONSTRUCTORS)
@pytest.mark.parametrize(("kwargs", "error", "word"), BAD_CONFIGS)
def test_bad_config_raises_clearly(
    make: Callable[..., Any], kwargs: dict[str, Any], error: Any, word: str
) -> None:
    """A bad keyword raises the right error class, naming the keyword (or rule) concerned."""
    with pytest.raises(error) as err:
        make(**kwargs)
    assert word in str(err.value), f"message does not name {word!r}: {err.value}"


GOOD_EDGES = [
    pytest.param({"max_pips": 13}, id="pips-13"),
    pytest.param({"max_pips": 6, "num_players": 8}, id="d6-8p"),
    pytest.param({"max_pips": 18, "num_players": 17}, id="d18-17p"),
    pytest.param({"rounds": 13}, id="rounds-13-d12"),
    pytest.param({"rounds": 7, "max_pips": 6, "num_players": 2}, id="rounds-7-d6"),
    pytest.param({"hand_size": 22}, id="hand-22-4p"),  # 88 of 90 dealable tiles
    pytest.param({"hand_size": 1}, id="hand-1"),
    pytest.param({"num_players": np.int64(3), "max_pips": np.int32(9)}, id="numpy-ints"),
    pytest.param({"one_tile_opening": np.bool_(True)}, id="numpy-bool-flag"),
    pytest.param({"rules": "cardinal", "one_tile_opening": None}, id="flag-none-takes-preset"),
]


@pytest.mark.parametrize("kwargs", GOOD_EDGES)
def test_edge_configs_are_accepted_and_play(kwargs: dict[str, Any]) -> None:
    """In-range edge values (double-13 is in 6..18; full sessions; tight deals) build and play."""
    env = mtrain_env.raw_env(**kwargs)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    while not all(env.terminations.values()):
        env.step(int(rng.choice(env.legal_actions())))
        steps += 1
        assert steps < 100_000
    assert len(env.state_obj.round_scores) == env.config.rounds


# ------------------------------------------------------------------------------- deals
def _deal_2p() -> dict[str, Any]:
    """A valid 2-seat double-6 deal of 4 tiles each; the engine 6-6 set aside (R5)."""
    tiles = [[a, b] for a in range(7) for b in range(a, 7) if (a, b) != (6, 6)]
    return {"hands": [tiles[0:4], tiles[4:8]], "boneyard": tiles[8:]}


def _deals() -> list[Any]:
    out = []

    def case(name: str, f: Callable[[dict[str, Any]], Any]) -> None:
        out.append(pytest.param(f, id=name))

    def set_(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
        def f(d: dict[str, Any]) -> None:
            d[path] = value

        return f

    case("three-hands", lambda d: d["hands"].append([]))
    case("hand-empty", lambda d: _Replace(_empty_hands([0])))
    case("hands-all-empty", lambda d: _Replace(_empty_hands([0, 1])))
    case("one-hand", lambda d: d["hands"].pop())
    case("tile-twice", lambda d: d["boneyard"].append(list(d["hands"][0][0])))
    case("tile-twice-across-hands", lambda d: d["hands"][1].append(list(d["hands"][0][0])))
    case("tile-missing", lambda d: d["boneyard"].pop())
    case("engine-in-hand", lambda d: d["hands"][0].append([6, 6]))
    case("engine-in-boneyard", lambda d: d["boneyard"].append([6, 6]))
    case("triple", lambda d: d["hands"][0].__setitem__(0, [0, 0, 1]))
    case("single", lambda d: d["hands"][0].__setitem__(0, [0]))
    case("pip-7", lambda d: d["boneyard"].__setitem__(0, [7, 1]))
    case("pip-negative", lambda d: d["boneyard"].__setitem__(0, [-1, 1]))
    case("pip-float", lambda d: d["boneyard"].__setitem__(0, [1.0, 2]))
    case("pip-bool", lambda d: d["boneyard"].__setitem__(0, [True, 2]))
    case("tile-str", lambda d: d["hands"][0].__setitem__(0, "0-0"))
    case("tile-none", lambda d: d["hands"][0].__setitem__(0, None))
    case("hands-str", set_("hands", "abc"))
    case("hand-str", lambda d: d["hands"].__setitem__(0, "00 01"))
    case("boneyard-str", set_("boneyard", "tiles"))
    case("boneyard-none", set_("boneyard", None))
    case("missing-boneyard", lambda d: d.pop("boneyard"))
    case("missing-hands", lambda d: d.pop("hands"))
    case("extra-key", set_("engine", [6, 6]))
    out.append(pytest.param(lambda d: _Replace("not a deal"), id="deal-str"))
    out.append(pytest.param(lambda d: _Replace(None), id="deal-none"))
    out.append(pytest.param(lambda d: _Replace([d["hands"], d["boneyard"]]), id="deal-list"))
    return out


class _Replace:
    """Returned by a mutation that replaces the whole deal."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _mutated(f: Callable[[dict[str, Any]], Any]) -> Any:
    d = copy.deepcopy(_deal_2p())
    r = f(d)
    return r.value if isinstance(r, _Replace) else d


@pytest.mark.parametrize("mutate", _deals())
def test_malformed_deal_raises_and_changes_nothing(mutate: Callable[[dict[str, Any]], Any]) -> None:
    """R1/R3/R5: a deal that is not exactly one set in the right shape is refused; no reset happens."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=4)
    env.reset(seed=1, options={"deal": _deal_2p()})
    env.step(env.legal_actions()[0])
    before = env.state_dict()
    with pytest.raises((ValueError, TypeError)) as err:
        env.reset(seed=2, options={"deal": _mutated(mutate)})
    assert str(err.value)
    assert env.state_dict() == before, "a refused deal must not touch the running game (nor its RNG)"
    # a never-reset env stays never-reset
    fresh = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=4)
    with pytest.raises((ValueError, TypeError)):
        fresh.reset(options={"deal": _mutated(mutate)})
    with pytest.raises(RuntimeError):
        fresh.state_dict()


def _empty_hands(seats: list[int]) -> dict[str, Any]:
    """The reference deal with the hands of ``seats`` put back on top of the boneyard."""
    d = _deal_2p()
    for seat in seats:
        d["boneyard"] = d["hands"][seat] + d["boneyard"]
        d["hands"][seat] = []
    return d


@pytest.mark.parametrize("seats", [[0], [1], [0, 1]], ids=["seat0", "seat1", "every-seat"])
def test_empty_hand_deal_is_refused_at_reset(seats: list[int]) -> None:
    """R4: every seat is dealt a tile. A fixed deal with an empty hand (the rest of it exactly
    the set) is refused by ``reset`` naming R4 and the hand; the env is left as it was. (An
    all-empty deal used to be accepted and leave the env unable to reload its own snapshot.)"""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=4)
    env.reset(seed=1, options={"deal": _deal_2p()})
    env.step(env.legal_actions()[0])
    before = env.state_dict()
    with pytest.raises(ValueError, match=rf"R4: deal\['hands'\]\[{seats[0]}\] is empty"):
        env.reset(seed=2, options={"deal": _empty_hands(seats)})
    assert env.state_dict() == before
    env.load_state_dict(env.state_dict())  # still its own consistent self
    with pytest.raises(ValueError, match="R4"):
        mtrain_env.env(num_players=2, max_pips=6, hand_size=4).reset(options={"deal": _empty_hands(seats)})


def test_engine_only_hand_is_refused_under_engine_holder_opens() -> None:
    """R4/R5 ``engine_holder_opens``: a hand of only the engine is empty once the engine is
    placed, so it is refused like an empty hand; the engine in a bigger hand is fine."""
    tiles = [[a, b] for a in range(7) for b in range(a, 7) if (a, b) != (6, 6)]
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=4, engine_holder_opens=True)
    with pytest.raises(ValueError, match=r"R4: deal\['hands'\]\[1\] holds only the engine \(6, 6\)"):
        env.reset(options={"deal": {"hands": [tiles[0:4], [[6, 6]]], "boneyard": tiles[4:]}})
    env.reset(options={"deal": {"hands": [tiles[0:4], [[6, 6], *tiles[4:5]]], "boneyard": tiles[5:]}})
    assert env.state_dict()["hands"][1] == [tiles[4]]


def test_valid_fixed_deal_is_used() -> None:
    """The reference deal of this file is valid (so the failures above are the mutations')."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6, hand_size=4)
    env.reset(seed=1, options={"deal": _deal_2p()})
    d = env.state_dict()
    assert d["hands"] == _deal_2p()["hands"]
    assert d["boneyard"] == _deal_2p()["boneyard"]


@pytest.mark.parametrize(
    ("options", "error"),
    [
        pytest.param({"first_player": -1}, ValueError, id="first-neg"),
        pytest.param({"first_player": 2}, ValueError, id="first-2-of-2"),
        pytest.param({"first_player": "0"}, TypeError, id="first-str"),
        pytest.param({"first_player": True}, TypeError, id="first-bool"),
        pytest.param({"first_player": 1.0}, TypeError, id="first-float"),
        pytest.param("deal", TypeError, id="options-str"),
    ],
)
def test_bad_reset_options(options: Any, error: type[Exception]) -> None:
    """R6: ``first_player`` must be a seat index; options must be a dict; nothing changes."""
    env = mtrain_env.raw_env(num_players=2, max_pips=6)
    env.reset(seed=3)
    before = env.state_dict()
    with pytest.raises(error):
        env.reset(seed=4, options=options)
    assert env.state_dict() == before


@pytest.mark.parametrize("game", ["mexican_train", "block"])
@pytest.mark.parametrize(
    ("seed", "error", "says"),
    [
        pytest.param(-1, ValueError, "got -1", id="negative"),  # was numpy's "expected non-negative integer"
        pytest.param(np.int64(-5), ValueError, "got -5", id="np-negative"),
        pytest.param(1.5, TypeError, "got 1.5 (float)", id="float"),  # was a SeedSequence TypeError
        pytest.param(3.0, TypeError, "got 3.0 (float)", id="integral-float"),
        pytest.param("3", TypeError, "got '3' (str)", id="str"),
        pytest.param(True, TypeError, "got True (bool)", id="bool"),  # was seed 1
    ],
)
def test_a_bad_seed_is_refused_naming_seed(game: str, seed: Any, error: type[Exception], says: str) -> None:
    """Gymnasium and PettingZoo seeds are non-negative ints (numpy ints too, and None);
    anything else is refused naming ``seed``, before any change, by both games' envs (and
    their wrapped ``env()``: one ``reset`` in tilegame)."""
    from mtrain_env.block import env as block_env

    make = mtrain_env.env if game == "mexican_train" else block_env
    e = make()
    e.reset(seed=3)
    before = e.unwrapped.state_dict()
    with pytest.raises(error, match=r"^seed must be a non-negative int or None, " + re.escape(says) + "$"):
        e.reset(seed=seed)
    assert e.unwrapped.state_dict() == before
    for good in (np.int64(3), np.uint8(3), 3):  # numpy ints deal as the same int
        e.reset(seed=good)
        assert e.unwrapped.state_dict() == before
    e.reset(seed=None)


# ----------------------------------------------------------------------------- actions
LEGAL_RE = re.compile(r"legal actions \(relative encoding\): \[([\d, ]*)\]")
RULE_RE = re.compile(r"\bR\d{1,2}\b|" + "|".join(VARIANT_FLAGS))


def _listed_legal(message: str) -> list[int] | None:
    m = LEGAL_RE.search(message)
    if m is None:
        return None
    return [int(x) for x in m.group(1).replace(" ", "").split(",") if x]


@pytest.mark.parametrize(
    "action",
    [
        pytest.param(-1, id="minus-1"),
        pytest.param("num_actions", id="num_actions"),
        pytest.param(10**9, id="huge"),
        pytest.param(1.5, id="float"),
        pytest.param(2.0, id="integral-float"),
        pytest.param("a", id="str"),
        pytest.param(None, id="none"),
        pytest.param(True, id="true"),
        pytest.param(False, id="false"),
        pytest.param(np.int64(-1), id="np-minus-1"),
        pytest.param(np.float32(3), id="np-float"),
        pytest.param(np.array([1, 2]), id="array"),
        pytest.param([0], id="list"),
    ],
)
def test_out_of_space_action_on_raw_env(action: Any) -> None:
    """Actions outside ``Discrete(num_actions)`` or not ints raise; the state is unchanged."""
    env = mtrain_env.raw_env()
    env.reset(seed=8)
    if isinstance(action, str) and action == "num_actions":
        action = env.config.num_actions
    before = env.state_dict()
    with pytest.raises((ValueError, TypeError)) as err:
        env.step(action)
    assert "Discrete" in str(err.value) or "action" in str(err.value)
    assert env.state_dict() == before
    env.step(env.legal_actions()[0])  # still playable


def test_out_of_space_action_message_lists_legal_actions() -> None:
    """The brief asks every rejected action to list the legal ones; out-of-range ones do not."""
    env = mtrain_env.raw_env()
    env.reset(seed=8)
    with pytest.raises(ValueError) as err:
        env.step(-1)
    assert sorted(_listed_legal(str(err.value)) or []) == env.legal_actions()


def test_numpy_integer_actions_are_accepted() -> None:
    """np.int64 and 0-d integer arrays are valid actions (what samplers return): each plays
    exactly as the same Python int does on a twin env (the state advanced, and identically)."""
    env, twin = mtrain_env.raw_env(), mtrain_env.raw_env()
    env.reset(seed=8)
    twin.reset(seed=8)
    for convert in (np.int64, np.array, np.int64, np.array):
        before = env.state_dict()
        action = env.legal_actions()[-1]
        env.step(convert(action))
        twin.step(action)
        after = env.state_dict()
        assert after != before and after["history_len"] == before["history_len"] + 1
        assert after == twin.state_dict() and env.agent_selection == twin.agent_selection


def _ends(d: dict[str, Any]) -> list[int]:
    """Open ends of the personal trains then the Mexican train, from ``state_dict`` (R7)."""
    e = d["engine"][0]
    return [tr[-1][1] if tr else e for tr in [*d["trains"], d["mexican_train"]]]


def expected_rule(env: Any, action: int) -> str | None:
    """The rule an illegal ``action`` clearly breaks, decided from the rule book, or None.

    Only unambiguous situations are classified; the others just need some rule id.
    """
    d = env.state_dict()
    c = env.config
    n = c.num_players
    seat = d["current_player"]
    legal = env.legal_actions()
    plays_legal = any(a < env.DRAW for a in legal)
    phase = d["phase"]
    if action == env.PASS:
        return "R15" if plays_legal or env.DRAW in legal else None
    if action == env.DRAW:
        if phase == "SEEK_ENGINE":
            return None
        if not d["boneyard"]:
            return "R16"
        if phase == "OPENING" and not c.opening_may_draw:
            return "R10"
        return "R15" if plays_legal else "R16"
    _, tile, rel = env.decode_action(action)
    hand = [tuple(sorted(t)) for t in d["hands"][seat]]
    if tuple(sorted(tile)) not in hand or phase == "SEEK_ENGINE":
        return None
    t = n if rel == n else (seat + rel) % n
    end = _ends(d)[t]
    if end not in tile:
        return "R7"
    if phase == "OPENING":
        return "R9" if t != seat else None
    first_tile = d["turn"]["tiles"] == 0
    if d["pending_doubles"] and first_tile and not c.no_double_satisfaction:
        return "R20"
    if d["turn"]["owes"] and c.cover_own_double_on_it:
        return "cover_own_double_on_it"
    if c.one_double_per_turn and d["turn"]["doubles"] and tile[0] == tile[1]:
        return "one_double_per_turn"
    if t not in (seat, n) and not d["markers"][t]:
        return "R14"
    if t not in (seat, n) and not d["trains"][seat]:
        return "R14"
    return None


ILLEGAL_CONFIGS = [
    pytest.param({}, id="pagat"),
    pytest.param({"num_players": 3, "max_pips": 9}, id="pagat-3p-d9"),
    pytest.param({"rules": "wikipedia", "rounds": 2}, id="wikipedia"),
    pytest.param({"rules": "cardinal"}, id="cardinal"),
    pytest.param({"cover_own_double_on_it": True, "max_pips": 9, "num_players": 2}, id="cover_own"),
    pytest.param({"one_double_per_turn": True, "max_pips": 9, "num_players": 2}, id="one_double"),
    pytest.param({"satisfy_in_reverse_order": True, "opening_draw": True}, id="reverse-opening_draw"),
]


def _illegal_in_hand_actions(env: Any, rng: np.random.Generator, k: int) -> list[int]:
    """Up to ``k`` illegal actions using tiles in the hand of the seat on turn, plus DRAW/PASS."""
    d = env.state_dict()
    seat = d["current_player"]
    legal = set(env.legal_actions())
    cands = [env.encode_action(tuple(t), tr) for t in d["hands"][seat] for tr in range(env.config.num_trains)]
    cands += [env.DRAW, env.PASS]
    cands = [a for a in cands if a not in legal]
    rng.shuffle(cands)
    return cands[:k]


@pytest.mark.parametrize("kwargs", ILLEGAL_CONFIGS)
def test_illegal_actions_name_the_rule_and_list_legal_actions(kwargs: dict[str, Any]) -> None:
    """raw_env: an illegal in-range action raises ValueError naming the rule; nothing changes."""
    hits: Counter[str] = Counter()
    for seed in range(4):
        env = mtrain_env.raw_env(**kwargs)
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            legal = env.legal_actions()
            before = env.state_dict()
            for action in _illegal_in_hand_actions(env, rng, 3):
                rule = expected_rule(env, action)
                with pytest.raises(ValueError) as err:
                    env.step(action)
                msg = str(err.value)
                assert RULE_RE.search(msg), f"no rule id in: {msg}"
                assert sorted(_listed_legal(msg) or []) == legal, msg
                if rule is not None:
                    assert rule in msg, f"expected {rule} for {env.decode_action(action)}: {msg}"
                    hits[rule] += 1
                assert env.state_dict() == before
                assert env.legal_actions() == legal
            env.step(int(rng.choice(legal)))
    assert hits, "no classified illegal action was tried"
    expected_kinds = {"R7", "R15"}  # the other rules: test_illegal_rule_ids_cover_every_situation
    if "cover_own_double_on_it" in kwargs:
        expected_kinds.add("cover_own_double_on_it")
    assert expected_kinds <= set(hits), f"situations not reached: {expected_kinds - set(hits)} ({hits})"


def test_illegal_rule_ids_cover_every_situation() -> None:
    """Across configs, the rule-naming check met R7, R9, R10, R14, R15, R16, R20 and variants."""
    hits: Counter[str] = Counter()
    for kwargs in [p.values[0] for p in ILLEGAL_CONFIGS]:
        for seed in range(6):
            env = mtrain_env.raw_env(**kwargs)
            env.reset(seed=100 + seed)
            rng = np.random.default_rng(seed)
            while not all(env.terminations.values()):
                for action in _illegal_in_hand_actions(env, rng, 4):
                    rule = expected_rule(env, action)
                    if rule is None:
                        continue
                    with pytest.raises(ValueError, match=re.escape(rule)):
                        env.step(action)
                    hits[rule] += 1
                env.step(int(rng.choice(env.legal_actions())))
    wanted = {"R7", "R9", "R10", "R14", "R15", "R16", "R20", "cover_own_double_on_it", "one_double_per_turn"}
    assert wanted <= set(hits), f"not reached: {wanted - set(hits)}"


def test_tile_not_in_hand_names_a_rule() -> None:
    """Laying a tile the seat does not hold: the message names no R-id (only 'not in hand')."""
    env = mtrain_env.raw_env()
    env.reset(seed=8)
    d = env.state_dict()
    held = {tuple(sorted(t)) for t in d["hands"][env.current_seat]}
    tile = next((a, b) for a in range(13) for b in range(a, 13) if (a, b) not in held and (a, b) != (12, 12))
    with pytest.raises(ValueError) as err:
        env.step(env.encode_action(tile, 0))
    assert RULE_RE.search(str(err.value)), str(err.value)


def test_tile_not_in_hand_is_rejected_with_legal_list() -> None:
    """Laying a tile the seat does not hold raises and lists the legal actions; nothing changes."""
    env = mtrain_env.raw_env()
    env.reset(seed=8)
    d = env.state_dict()
    held = {tuple(sorted(t)) for t in d["hands"][env.current_seat]}
    tile = next((a, b) for a in range(13) for b in range(a, 13) if (a, b) not in held and (a, b) != (12, 12))
    before = env.state_dict()
    with pytest.raises(ValueError) as err:
        env.step(env.encode_action(tile, 0))
    assert "hand" in str(err.value)
    assert sorted(_listed_legal(str(err.value)) or []) == env.legal_actions()
    assert env.state_dict() == before


def test_none_action_for_a_live_agent_raises() -> None:
    """``None`` is only for dead steps; a live agent passing None is an error (R15: no auto-action)."""
    env = mtrain_env.raw_env()
    env.reset(seed=0)
    before = env.state_dict()
    with pytest.raises(TypeError):
        env.step(None)
    assert env.state_dict() == before


# -------------------------------------------------------------------------- wrapped env
@pytest.mark.parametrize("seed", range(4))
def test_wrapped_env_illegal_action_terminates_with_penalty(seed: int) -> None:
    """env(): an illegal in-range action -> offender -1, others 0, every agent terminated."""
    e = mtrain_env.env(num_players=3, rounds=2)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(int(rng.integers(0, 40))):
        e.step(int(rng.choice(e.unwrapped.legal_actions())))
    offender = e.agent_selection
    mask = e.observe(offender)["action_mask"]
    illegal = int(rng.choice(np.flatnonzero(mask == 0)))
    e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[offender] == -1
    assert all(r == 0 for a, r in e.rewards.items() if a != offender)
    assert e.last()[2]
    # the AEC loop drains with None actions
    for _agent in e.agent_iter():
        _, _, term, trunc, _ = e.last()
        assert term or trunc
        e.step(None)
    assert not e.agents


@pytest.mark.parametrize(
    ("action", "error"), [(-1, ValueError), ("num_actions", ValueError), (1.5, TypeError)]
)
def test_wrapped_env_out_of_space_action_is_refused(action: Any, error: type[Exception]) -> None:
    """env(): actions outside the space raise the bare env's clear error (not an assertion)."""
    e = mtrain_env.env()
    e.reset(seed=0)
    if action == "num_actions":
        action = e.unwrapped.config.num_actions
    before = e.unwrapped.state_dict()
    with pytest.raises(error, match=r"action space Discrete\(457\)"):
        e.step(action)
    assert e.unwrapped.state_dict() == before


def test_step_before_reset_raises() -> None:
    """Calling step before reset is an error, not a silent no-op."""
    with pytest.raises(Exception):  # noqa: B017 - any error is fine; OrderEnforcingWrapper raises its own
        mtrain_env.env().step(0)
    with pytest.raises(Exception):  # noqa: B017
        mtrain_env.raw_env().step(0)


def test_phase_constant_is_public() -> None:
    """Tests rely on ``Phase`` ordering: ROUND_OVER after play phases (state module contract)."""
    assert Phase.SEEK_ENGINE < Phase.OPENING < Phase.NORMAL < Phase.ROUND_OVER < Phase.GAME_OVER


def test_illegal_message_names_trains_unambiguously() -> None:
    """Seat 2 of 4 lays on relative train 1 (seat 3's train): the message should say whose train."""
    env = mtrain_env.raw_env()
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    while env.current_seat != 2 or env.state_obj.phase != Phase.NORMAL:
        env.step(int(rng.choice(env.legal_actions())))
    tile = tuple(env.state_dict()["hands"][2][0])
    action = env.encode_action(tile, 1)
    assert action not in env.legal_actions()
    with pytest.raises(ValueError) as err:
        env.step(action)
    msg = str(err.value)
    assert "player_3" in msg or "+1" in msg, msg
