"""``BatchedMexicanTrain.state_dict`` / ``load_state_dict``: exact continuation, bad snapshots refused."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

from mtrain_env.mexican_train.compiled.batch import SNAPSHOT_ARRAYS, BatchedMexicanTrain

#: (batch keywords): single rounds, and sessions whose next round is dealt inside a step
CONFIGS = [
    {"num_players": 3, "max_pips": 6, "reward": "zero_sum"},
    {"num_players": 2, "max_pips": 6, "rounds": 3, "reward": "penalty"},
]
GAMES = 6


def _played(
    kwargs: dict[str, Any], steps: int, seed: int = 5
) -> tuple[BatchedMexicanTrain, np.random.Generator]:
    batch = BatchedMexicanTrain(GAMES, copy=True, **kwargs)
    _obs, mask, *_ = batch.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        _obs, mask, *_ = batch.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    return batch, rng


def _same_snapshot(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        all(np.array_equal(a["arrays"][k], b["arrays"][k]) for k in SNAPSHOT_ARRAYS)
        and a["rngs"] == b["rngs"]
        and {k: v for k, v in a.items() if k not in ("arrays", "rngs")}
        == {k: v for k, v in b.items() if k not in ("arrays", "rngs")}
    )


@pytest.mark.parametrize("kwargs", CONFIGS)
def test_a_restored_batch_continues_bit_identically(kwargs: dict[str, Any]) -> None:
    original, rng = _played(kwargs, steps=17)  # mid-episode
    snapshot = pickle.loads(pickle.dumps(original.state_dict()))
    restored = BatchedMexicanTrain(GAMES, copy=True, **kwargs)  # fresh, never reset
    obs, mask, seat = restored.load_state_dict(snapshot)
    current = original.state_dict()["arrays"]
    np.testing.assert_array_equal(obs, current["obs"])
    np.testing.assert_array_equal(mask, current["masks"])
    np.testing.assert_array_equal(seat, current["seats"])
    ended = rounds = 0
    for _ in range(150):  # past the end of every episode, into the next ones (new deals)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        a = original.step(actions)
        b = restored.step(actions)
        for x, y in zip(a[:5], b[:5], strict=True):  # obs, mask, seat, rewards, terminated
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(a[5]["round_over"], b[5]["round_over"])
        done = a[4]
        np.testing.assert_array_equal(a[5]["final_obs"][done], b[5]["final_obs"][done])
        ended += int(done.sum())
        rounds += int(a[5]["round_over"].sum())
        mask = a[1]
    assert ended >= GAMES  # every game finished an episode and went on with the next
    assert rounds > ended if kwargs.get("rounds", 1) > 1 else rounds == ended
    np.testing.assert_array_equal(original.states, restored.states)
    assert restored.seed == original.seed


def _bad(snapshot: dict[str, Any], what: str) -> Any:
    s = copy.deepcopy(snapshot)
    arrays = s["arrays"]
    if what == "not a dict":
        return list(s)
    if what == "missing key":
        del s["rngs"]
    elif what == "float states":
        arrays["states"] = arrays["states"].astype(np.float64)
    elif what == "short obs":
        arrays["obs"] = arrays["obs"][:-1]
    elif what == "seat out of range":
        arrays["seats"][2] = 7
    elif what == "empty mask":
        arrays["masks"][1] = 0
    elif what == "bad generator":
        s["rngs"][3] = {"bit_generator": "MT19937", "state": {}}
    elif what == "broken generator":
        s["rngs"][3] = {"bit_generator": "PCG64", "state": {"state": "x"}}
    elif what == "reward":
        s["reward"] = "win"
    elif what == "seed":
        s["seed"] = "seven"
    return s


BAD = {
    "not a dict": "a batch snapshot is a dict",
    "missing key": "a batch snapshot is a dict with keys",
    "float states": "states must be a int64 array",
    "short obs": r"obs must be a float32 array of shape \(6, ",
    "seat out of range": "seats must be in 0..2",
    "empty mask": "must have a legal action",
    "bad generator": "generator 3 is not a PCG64 state",
    "broken generator": "generator 3 has a bad state",
    "reward": "reward mode is 'win'",
    "seed": "seed must be an int or None",
}


def test_bad_snapshots_are_refused_and_change_nothing() -> None:
    kwargs = CONFIGS[0]
    source, _ = _played(kwargs, steps=9)
    snapshot = source.state_dict()
    target, _ = _played(kwargs, steps=4, seed=8)
    before = target.state_dict()
    other_size = BatchedMexicanTrain(GAMES + 1, num_players=3, max_pips=6)
    other_game = BatchedMexicanTrain(GAMES, num_players=3, max_pips=9)
    cases = [(_bad(snapshot, what), message) for what, message in BAD.items()]
    cases += [
        (_snapshot_of(other_size), "holds 7 games, this batch 6"),
        (_snapshot_of(other_game), r"another game config \(differs in \['hand_size', 'max_pips'\]\)"),
    ]
    for bad, message in cases:
        with pytest.raises(ValueError, match=message) as err:
            target.load_state_dict(bad)
        assert "\n" not in str(err.value)
        assert _same_snapshot(target.state_dict(), before)
    target.load_state_dict(snapshot)  # the good one still loads
    assert _same_snapshot(target.state_dict(), snapshot)


def _snapshot_of(batch: BatchedMexicanTrain) -> dict[str, Any]:
    batch.reset(seed=1)
    return batch.state_dict()


def test_a_snapshot_needs_a_reset_batch() -> None:
    with pytest.raises(RuntimeError, match="reset"):
        BatchedMexicanTrain(2, num_players=3, max_pips=6).state_dict()
