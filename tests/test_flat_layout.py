"""``FlatLayout.fill``, the bit-unpacking behind every observation, on layouts of every shape."""

from __future__ import annotations

import numpy as np
import pytest

from mtrain_env.tilegame.layout import FlatLayout


@pytest.mark.parametrize("binary_bits", [0, 1, 3, 8, 9, 16, 61, 328])
@pytest.mark.parametrize("real_count", [0, 1, 4])
def test_fill_matches_the_plain_construction(binary_bits: int, real_count: int) -> None:
    """Bit i of ``bits`` -> element i as 0.0/1.0, then the reals as float32; a fresh writable vector."""
    binary = [("bits", (binary_bits,), "0/1")] if binary_bits else []
    real = [("reals", (real_count,), np.inf, "real")] if real_count else []
    layout = FlatLayout(binary, real)
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
    layout = FlatLayout([("a", (2, 3), "a"), ("b", (5,), "b")], [("c", (1,), 2.0, "c")])
    assert layout["a"].slice == slice(0, 6) and layout["b"].slice == slice(6, 11)
    assert layout["c"].slice == slice(11, 12) and layout.size == 12 and layout.binary_size == 11
    assert layout.high.tolist() == [1.0] * 11 + [2.0]
    with pytest.raises(ValueError, match="duplicate"):
        FlatLayout([("a", (1,), "a")], [("a", (1,), 1.0, "a")])
