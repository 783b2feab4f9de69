"""``FlatLayout.fill``, the bit-unpacking behind every observation, on layouts of every shape."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from mtrain_env.tilegame.layout import FlatLayout


@pytest.mark.parametrize("binary_bits", [0, 1, 3, 8, 9, 16, 61, 328])
@pytest.mark.parametrize("real_count", [0, 1, 4])
def test_fill_matches_the_plain_construction(binary_bits: int, real_count: int) -> None:
    """Bit i of ``bits`` -> element i as 0.0/1.0, then the reals as float32; a fresh writable vector."""
    binary = [("bits", (binary_bits,), "0/1")] if binary_bits else []
    real = [("reals", (real_count,), np.inf, "real")] if real_count else []
    layout = FlatLayout(binary, real, version=1)
    rng = np.random.default_rng(binary_bits * 10 + real_count)
    for _ in range(20):
        flags = rng.integers(0, 2, binary_bits)
        bits = sum(1 << i for i, f in enumerate(flags) if f)
        values = rng.normal(size=real_count).tolist()
        obs = layout.fill(bits, values)
        expected = np.concatenate([flags, values]).astype(np.float32)
        assert obs.dtype == np.float32 and obs.shape == (layout.size,)
        np.testing.assert_array_equal(obs, expected)
        assert obs.flags.writeable
        obs[...] = 7  # writable without touching the next observation
        np.testing.assert_array_equal(layout.fill(bits, values), expected)


def test_views_are_disjoint_and_named() -> None:
    layout = FlatLayout([("a", (2, 3), "a"), ("b", (5,), "b")], [("c", (1,), 2.0, "c")], version=1)
    assert layout["a"].slice == slice(0, 6) and layout["b"].slice == slice(6, 11)
    assert layout["c"].slice == slice(11, 12) and layout.size == 12 and layout.binary_size == 11
    assert layout.high.tolist() == [1.0] * 11 + [2.0]
    with pytest.raises(ValueError, match="duplicate"):
        FlatLayout([("a", (1,), "a")], [("a", (1,), 1.0, "a")], version=1)


# ------------------------------------------------------------------------- versions
def test_a_layout_carries_its_version_and_the_env_publishes_it() -> None:
    """Every game's layout has a version (the default one is what shipped networks read)."""
    import mtrain_env
    from mtrain_env.block import raw_env as block_env
    from mtrain_env.mexican_train.observation import OBSERVATION_VERSION

    env = mtrain_env.raw_env(num_players=3, max_pips=6)
    assert env.observation_version == env.layout.version == OBSERVATION_VERSION == 1
    assert block_env().observation_version == 1
    for bad in (0, True, 1.0):
        with pytest.raises(ValueError, match="version must be an int >= 1"):
            FlatLayout([("a", (1,), "a")], [], version=bad)  # type: ignore[arg-type]


def test_an_opt_in_view_is_a_new_version_and_the_default_stays() -> None:
    """``observation_version=2`` appends ``hand_pips`` (the hand's tiles per pip value) to
    version 1's vector, which stays the default and stays the same."""
    import mtrain_env

    kwargs: dict[str, Any] = {"num_players": 3, "max_pips": 6, "rounds": 2}
    old, new = mtrain_env.raw_env(**kwargs), mtrain_env.raw_env(**kwargs, observation_version=2)
    assert new.observation_version == 2 and "hand_pips" not in old.layout
    assert list(new.layout.views) == [*old.layout.views, "hand_pips"]
    assert new.layout["hand_pips"].shape == (7,) and new.layout.size == old.layout.size + 7
    old.reset(seed=3)
    new.reset(seed=3)
    for _ in range(12):
        for agent in old.agents:
            a, b = old.observe(agent)["observation"], new.observe(agent)["observation"]
            np.testing.assert_array_equal(b[: old.layout.size], a)
            hand = [
                t
                for t in range(old.config.num_tiles)
                if old.state_obj.hands[old.agent_name_mapping[agent]] >> t & 1
            ]
            counts = [sum(v in set(old.config.tiles.tiles[t]) for t in hand) for v in range(7)]
            expected = np.array(counts, np.float32) / np.float32(old.config.hand_size)
            np.testing.assert_allclose(b[new.layout["hand_pips"].slice], expected, rtol=1e-6)
        action = int(np.flatnonzero(old.observe_mask(old.agent_selection))[0])
        old.step(action)
        new.step(action)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"observation_version": 3}, "observation_version must be one of 1, 2, got 3"),
        ({"observation_version": "2"}, "observation_version must be one of 1, 2, got '2'"),
        ({"observation_version": 2, "backend": "compiled"}, 'observation_version=2 needs backend="python"'),
    ],
)
def test_an_unknown_or_unsupported_observation_version_is_refused(kwargs: dict[str, Any], says: str) -> None:
    import mtrain_env

    with pytest.raises(ValueError, match=re.escape(says)):
        mtrain_env.raw_env(num_players=3, max_pips=6, **kwargs)
