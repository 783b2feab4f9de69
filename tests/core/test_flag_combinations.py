"""Flag combinations: the contradictory ones are refused, the others follow documented rules.

* ``GameConfig.make`` (and so ``raw_env``/``env``) refuses exactly the pairs of
  :data:`~mtrain_env.mexican_train.core.config.CONTRADICTORY_FLAGS` (both flags named, the
  preset's flags included), checked over every pair of flags under every preset;
* the precedence rules of ``FLAG_PRECEDENCE`` and the block game's ``KEYWORD_PRECEDENCE``
  that say a keyword "adds nothing" or "has no effect" are true: games played with and
  without it are identical step for step;
* the guide's combination table (docs/variants.md) is generated from those constants.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import mtrain_env
from mtrain_env.block.core.config import KEYWORD_PRECEDENCE
from mtrain_env.block.core.config import GameConfig as BlockConfig
from mtrain_env.mexican_train.core.config import (
    CONTRADICTORY_FLAGS,
    FLAG_PRECEDENCE,
    PRESETS,
    VARIANT_FLAGS,
    GameConfig,
)
from tests import REPO

VARIANTS = (REPO / "docs" / "variants.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------ refused
@pytest.mark.parametrize(("flag", "other", "why"), CONTRADICTORY_FLAGS, ids=lambda x: str(x)[:24])
@pytest.mark.parametrize(
    "make", [GameConfig.make, mtrain_env.raw_env, mtrain_env.env], ids=["make", "raw_env", "env"]
)
def test_contradictory_pair_is_refused_naming_both(
    make: Callable[..., Any], flag: str, other: str, why: str
) -> None:
    with pytest.raises(ValueError) as err:
        make(**{flag: True, other: True})
    message = str(err.value)
    assert f"{flag}=True" in message and f"{other}=True" in message and why in message, message
    make(**{flag: True})  # each alone is fine
    make(**{other: True})


def test_a_preset_flag_counts_and_the_message_says_which_to_turn_off() -> None:
    """``cardinal`` sets draw_until_engine_match: adding opening_draw is refused, naming the
    preset and the fix; following the fix works."""
    with pytest.raises(
        ValueError, match="comes from the 'cardinal' preset: pass draw_until_engine_match=False"
    ):
        mtrain_env.raw_env(rules="cardinal", opening_draw=True)
    config = mtrain_env.raw_env(rules="cardinal", opening_draw=True, draw_until_engine_match=False).config
    assert config.opening_draw and not config.draw_until_engine_match and config.one_tile_opening


def test_exactly_the_declared_pairs_are_refused() -> None:
    """Every pair of flags under every preset: refused iff it (with the preset's flags) holds a
    declared contradictory pair. So the table is complete and nothing else is refused."""
    declared = {frozenset((a, b)) for a, b, _ in CONTRADICTORY_FLAGS}
    refused_seen = set()
    for rules, preset in PRESETS.items():
        for pair in itertools.combinations(VARIANT_FLAGS, 2):
            on = {f for f, v in preset.flags.items() if v} | set(pair)
            expected = any(d <= on for d in declared)
            try:
                GameConfig.make(rules=rules, **dict.fromkeys(pair, True))
            except ValueError:
                assert expected, f"{rules} {pair} refused but not declared"
                refused_seen |= {d for d in declared if d <= on}
            else:
                assert not expected, f"{rules} {pair} accepted but declared contradictory"
    assert refused_seen == declared


def test_the_constructor_refuses_too() -> None:
    """A config built directly (as a snapshot's would be) is held to the same rule."""
    flag, other, _ = CONTRADICTORY_FLAGS[0]
    with pytest.raises(ValueError, match=other):
        GameConfig(hand_size=15, **{flag: True, other: True})


# --------------------------------------------------------------------- no-effect rules
def _trace(env: Any, seed: int, max_steps: int = 5000) -> list[tuple[Any, ...]]:
    """The whole game of ``env`` from ``seed`` with seeded random choices among the legal
    actions (the same index whatever the env): agent, legal actions, rewards at every step."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace: list[tuple[Any, ...]] = []
    while not all(env.terminations.values()):
        legal = env.legal_actions()
        trace.append((env.agent_selection, tuple(legal), tuple(env.rewards.values())))
        env.step(legal[int(rng.integers(len(legal)))])
        assert len(trace) < max_steps
    trace.append(("end", tuple(env.rewards.values()), tuple(env._cumulative_rewards.values())))
    return trace


def _differing_seeds(
    make: Callable[..., Any], base: dict[str, Any], extra: dict[str, Any], seeds: int
) -> int:
    """How many of ``seeds`` games differ with ``extra`` added to ``base``."""
    return sum(_trace(make(**base), seed) != _trace(make(**{**base, **extra}), seed) for seed in range(seeds))


def _raw_block(**kwargs: Any) -> Any:
    return mtrain_env.block_dominoes_env(**kwargs).unwrapped


@pytest.mark.parametrize(
    ("make", "base", "extra", "control"),
    [
        # one_tile_opening + opening_draw: opening_draw adds nothing (it does under pagat)
        pytest.param(
            mtrain_env.raw_env,
            {"rules": "wikipedia", "num_players": 3, "max_pips": 9},
            {"opening_draw": True},
            {"num_players": 3, "max_pips": 9},
            id="one_tile_opening-opening_draw",
        ),
        # cover_own_double_on_it leaves no second double in a turn (without it there is one)
        pytest.param(
            mtrain_env.raw_env,
            {"one_tile_opening": True, "cover_own_double_on_it": True, "num_players": 3, "max_pips": 9},
            {"one_double_per_turn": True},
            {"one_tile_opening": True, "num_players": 3, "max_pips": 9},
            id="cover_own-one_double_per_turn",
        ),
        # block, a single hand: opener, target, double_opening have no effect (in a match,
        # or with seat 0 choosing its opening tile, they do)
        pytest.param(_raw_block, {}, {"opener": "partner"}, {"match": True, "target": 30}, id="block-opener"),
        pytest.param(_raw_block, {}, {"target": 1}, {"match": True}, id="block-target"),
        pytest.param(
            _raw_block,
            {"scoring": "ten"},
            {"target": 2},
            {"scoring": "ten", "match": True},
            id="block-target-ten",
        ),
        pytest.param(
            _raw_block, {}, {"double_opening": True}, {"first_opener": "seat0"}, id="block-double_opening"
        ),
        pytest.param(
            _raw_block,
            {"match": True, "opener": "double_six", "target": 60},
            {"double_opening": True},
            {"match": True, "target": 60},
            id="block-double_opening-forced-double-six",
        ),
    ],
)
def test_keyword_documented_as_without_effect_changes_no_game(
    make: Callable[..., Any], base: dict[str, Any], extra: dict[str, Any], control: dict[str, Any]
) -> None:
    """The precedence rules that say a keyword does nothing under another are true: the same
    seeds play the same games step for step with and without it, while under ``control``
    (the other keyword off) the same keyword does change some games."""
    assert _differing_seeds(make, base, extra, 12) == 0
    assert _differing_seeds(make, control, extra, 12) > 0


def test_one_double_per_turn_still_limits_a_first_turn_chain_under_cover_own() -> None:
    """The other half of that rule: in a multi-tile opening chain (R9), cover_own_double_on_it
    does not apply and one_double_per_turn forbids the second double."""
    tiles = [[a, b] for a in range(10) for b in range(a, 10) if (a, b) != (9, 9)]
    hands = [[[1, 9], [1, 1], [1, 2], [2, 2]], [[0, 9], [3, 4]]]
    deal = {"hands": hands, "boneyard": [t for t in tiles if t not in hands[0] + hands[1]]}
    legal = {}
    for flag in (False, True):
        env = mtrain_env.raw_env(
            num_players=2, max_pips=9, cover_own_double_on_it=True, one_double_per_turn=flag
        )
        env.reset(seed=0, options={"deal": deal})
        for tile in [(1, 9), (1, 1), (1, 2)]:  # a chain with one double so far
            env.step(env.encode_action(tile, 0))
        legal[flag] = env.legal_actions()
    assert legal[False] == [env.encode_action((2, 2), 0), env.PASS]
    assert legal[True] == [env.PASS]


def test_block_keywords_are_never_refused_together() -> None:
    """No block keyword pair is refused (they compose by KEYWORD_PRECEDENCE)."""
    for match, opener, double_opening, first_opener in itertools.product(
        (False, True), ("winner", "partner", "double_six"), (False, True), ("double_six", "seat0")
    ):
        BlockConfig.make(match=match, opener=opener, double_opening=double_opening, first_opener=first_opener)


# ----------------------------------------------------------------------------- docs/variants.md
def _rows() -> list[str]:
    def flags(names: tuple[str, ...]) -> str:
        return " + ".join(f"`{f}`" for f in names)

    rows = [f"| Mexican Train | {flags((a, b))} | **refused**: {why} |" for a, b, why in CONTRADICTORY_FLAGS]
    rows += [f"| Mexican Train | {flags(names)} | {rule} |" for names, rule in FLAG_PRECEDENCE]
    rows += [f"| block dominoes | {flags(names)} | {rule} |" for names, rule in KEYWORD_PRECEDENCE]
    return rows


def test_the_guide_combination_table_matches_the_code() -> None:
    block = VARIANTS.split("<!-- flag-combinations:start")[1].split("<!-- flag-combinations:end -->")[0]
    rows = [line for line in block.splitlines() if line.startswith("| ") and not line.startswith("| game")]
    assert rows == _rows()
    for names, _ in (*FLAG_PRECEDENCE, *KEYWORD_PRECEDENCE):
        for name in names:
            assert name in VARIANT_FLAGS or name in {f for f in BlockConfig.__dataclass_fields__}, name
