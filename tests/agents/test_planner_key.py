"""One ranking of plays for the planner and mc's rollouts (:func:`agents.mexican_train.planner.play_key`).

The planner and ``mc``'s ``chain`` rollout policy rank plays with the same key; the
rollouts add up its per-criterion terms (taken from ``play_key`` once per config) instead
of calling it. These tests pin the key's lexicographic order and that the rollout's terms
add up to it exactly.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from agents.mexican_train.greedy import greedy_key
from agents.mexican_train.planner import lifts_marker, play_key, sheds
from agents.mexican_train.rollout_policies import ChainPolicy, greedy_keys
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import Phase

#: the fields' ranges: flags, shed value (<= 50), damage (< 190), value (<= 50)
RANGES = (2, 51, 2, 2, 190, 2, 51)


def _random_fields(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(rng.integers(r)) for r in RANGES)


def _lexicographic(f: tuple[int, ...]) -> tuple[int, ...]:
    covers, shed, double_ok, lifts, damage, off_own, value = f
    return (covers, shed, double_ok, lifts, -damage, off_own, value)


def test_play_key_orders_plays_lexicographically() -> None:
    rng = np.random.default_rng(0)
    fields = [_random_fields(rng) for _ in range(400)]
    # neighbours that differ in one field only, the hardest cases for a packed key
    for f in fields[:100]:
        for i, r in enumerate(RANGES):
            fields.append((*f[:i], r - 1 - f[i], *f[i + 1 :]))
    for a, b in itertools.combinations(fields, 2):
        want = (_lexicographic(a) > _lexicographic(b)) - (_lexicographic(a) < _lexicographic(b))
        got = (play_key(*a) > play_key(*b)) - (play_key(*a) < play_key(*b))
        assert got == want, (a, b)


@pytest.mark.parametrize("kwargs", [{}, {"blank_penalty": True}, {"max_pips": 18, "num_players": 4}])
def test_chain_rollout_terms_add_up_to_play_key(kwargs: dict) -> None:
    policy = ChainPolicy(MexicanTrain(GameConfig.make(**kwargs)))
    damage = ChainPolicy.DAMAGE
    for t, v in enumerate(policy.values):
        for own, reserved, covers, shed, double_ok, lifts in itertools.product((False, True), repeat=6):
            key = policy.tile_keys[t << 2 | own << 1 | reserved]
            key += covers * policy.covers_term + shed * policy.shed_terms[t]
            key += double_ok * policy.double_ok_term + lifts * policy.lifts_term
            expected = play_key(covers, v if shed else 0, double_ok, lifts, damage[own, reserved], not own, v)
            assert key == expected


def test_chain_damage_estimate_ranks_extras_first_and_cut_chains_last() -> None:
    damage = ChainPolicy.DAMAGE
    assert damage[False, False] == 0  # an extra off the own train: the chain is untouched
    assert damage[True, True] == 1  # the chain's own next tile
    assert damage[False, True] == max(damage.values())


def test_shedding_and_marker_lifting_apply_in_normal_play_only() -> None:
    config = GameConfig.make()
    assert sheds(Phase.NORMAL, [5, 2, 9], 0, 2)
    assert not sheds(Phase.NORMAL, [2, 5, 9], 0, 2)  # the seat's own count does not count
    assert not sheds(Phase.OPENING, [5, 2, 9], 0, 2)
    assert lifts_marker(config, Phase.NORMAL, True)
    assert not lifts_marker(config, Phase.NORMAL, False)
    assert not lifts_marker(config, Phase.OPENING, True)
    assert not lifts_marker(GameConfig.make(marker_off_by_owner_play_anywhere=True), Phase.NORMAL, True)


def test_greedy_rollout_keys_are_the_greedy_agents() -> None:
    config = GameConfig.make(num_players=3, max_pips=6)
    keys = greedy_keys(config)
    width = config.num_trains
    values = ChainPolicy(MexicanTrain(config)).values
    for seat in range(3):
        for m in range(config.draw_action):
            assert keys[seat][m] == greedy_key(values[m // width], m % width == seat)
        assert keys[seat][config.draw_action] < min(keys[seat][: config.draw_action])
    assert greedy_key(10, False) > greedy_key(9, True) > greedy_key(9, False)
