"""Our fast wrappers (``mtrain_env.tilegame.wrappers``) behave exactly as PettingZoo's stock ones."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils import wrappers

import mtrain_env


def _stock_env(**kwargs: object) -> object:
    env = wrappers.TerminateIllegalWrapper(mtrain_env.raw_env(**kwargs), illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def _snapshot(env: object) -> tuple:
    obs, reward, term, trunc, info = env.last()  # type: ignore[attr-defined]
    return (
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        reward,
        term,
        trunc,
        info["action_mask"].tobytes(),
        env.agent_selection,  # type: ignore[attr-defined]
        dict(env.rewards),  # type: ignore[attr-defined]
        dict(env.terminations),  # type: ignore[attr-defined]
        list(env.agents),  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize("seed", range(6))
def test_fast_wrappers_match_pettingzoo_wrappers(seed: int) -> None:
    """Same actions (legal ones, numpy ints, and an illegal one at a random step) -> same AEC trace."""
    ours, stock = mtrain_env.env(num_players=3, rounds=2), _stock_env(num_players=3, rounds=2)
    ours.reset(seed=seed)
    stock.reset(seed=seed)  # type: ignore[attr-defined]
    rng = np.random.default_rng(seed)
    illegal_at = int(rng.integers(5, 200)) if seed % 2 else -1
    for step, agent in enumerate(ours.agent_iter()):
        assert agent == stock.agent_selection  # type: ignore[attr-defined]
        snap = _snapshot(ours)
        assert snap == _snapshot(stock)
        term, trunc = snap[3], snap[4]
        if term or trunc:
            action = None
        else:
            mask = np.frombuffer(snap[1], dtype=np.int8)
            pool = np.flatnonzero(mask == 0) if step == illegal_at else np.flatnonzero(mask)
            action = rng.choice(pool)  # a numpy integer: the slow (stock) paths
            action = int(action) if step % 3 else action
        ours.step(action)
        stock.step(action)  # type: ignore[attr-defined]
    assert not stock.agents  # type: ignore[attr-defined]
    assert ours.unwrapped.state_dict() == stock.unwrapped.state_dict()  # type: ignore[attr-defined]
