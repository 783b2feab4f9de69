"""Leaves of a self-play network for ``mc``: ``leaf="policy"`` plays the searching seat's
later choices by the network to the round's end, instead of the chain policy's rollouts of
the seat's own hand (the ``champion`` agent's rollouts).

A chain rollout scores a candidate by how the CHAIN policy would go on playing the seat's
hand: its preferences are the chain policy's. Here each candidate is played on each
determinized world to the seat's next real choice (the other seats by the chain policy,
forced moves as they come: :func:`~mtrain_env.mexican_train.compiled.rollout.advance_to_choice`),
where the network's argmax on the seat's OWN observation of it (what the seat would see
there) makes the move, and so on to the round's end, which is scored exactly in pips
(:func:`agents.mexican_train.rollout_policies.round_result`).

Every world's candidates take their step of the seat in one batched forward pass, in numpy
float32 (no torch; within float32 rounding of the ``ppo`` agent's float64), BLAS on one
thread; ``results`` can split the worlds over a rollout thread pool, one block each.
Deterministic: the worlds are ``mc``'s, the network's argmax is a function of the
observation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.mexican_train.numpy_nets import NumpyMlpNet, NumpyTileNet, numpy_net
from agents.mexican_train.selfplay_file import is_selfplay_policy, read_selfplay_file
from mtrain_env.mexican_train.compiled import engine, rollout
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.observation import ObservationLayout

__all__ = ["ValueLeaves", "check_table", "load_value_net"]

#: a seat's choices in one round can never reach this (every choice plays a tile or draws)
_TO_THE_END = 10_000

_NETS: dict[str, NumpyTileNet | NumpyMlpNet] = {}


def _one_blas_thread() -> None:
    """numpy's BLAS on one thread for the rest of the process. The leaves' matrix products
    are small (a few hundred rows by 128); on a machine whose cores are busy, BLAS threads
    only contend (several times slower a forward pass with the other core taken)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


def load_value_net(path: str | Path) -> NumpyTileNet | NumpyMlpNet:
    """The network of the self-play policy file ``path`` in float32 (cached per process);
    ``ValueError`` for any other file (the leaves read the self-play format)."""
    key = str(Path(path).resolve())
    net = _NETS.get(key)
    if net is None:
        if not Path(path).is_file():
            raise FileNotFoundError(f"no policy file at {path}")
        if not is_selfplay_policy(path):
            raise ValueError(f"a network leaf needs a self-play policy file (mtrain selfplay), got {path}")
        spec, arrays = read_selfplay_file(path)
        net = _NETS[key] = numpy_net(spec, arrays, np.float32)
    return net


def check_table(net: NumpyTileNet | NumpyMlpNet, config: GameConfig) -> None:
    """``ValueError`` unless ``net`` reads ``config``'s observation and scores its actions."""
    size = ObservationLayout(config).size
    if net.size != size or net.num_actions != config.num_actions:
        raise ValueError(
            f"the network was trained for another table ({net.size} observation floats, "
            f"{net.num_actions} actions); this game has {size} and {config.num_actions} "
            f"({config.num_players} players, double-{config.max_pips})"
        )


class ValueLeaves:
    """Candidates played out by ``net`` on determinized worlds of one game config (module
    docstring).

    Args:
        net: a self-play network for ``config``'s table (``ValueError`` otherwise).
        config: the game's config.
        danger: the chain policy's ``danger`` (as ``mc``'s rollouts).
    """

    def __init__(self, net: NumpyTileNet | NumpyMlpNet, config: GameConfig, danger: int = 2) -> None:
        check_table(net, config)
        _one_blas_thread()
        self.net = net
        self.danger = danger
        self.obs_size = ObservationLayout(config).size
        self.num_actions = config.num_actions

    def results(
        self,
        det: rollout.Determinizer,
        base: int,
        first: int,
        count: int,
        candidates: list[int],
        sc: Any,
        pool: rollout.ThreadPool | None = None,
    ) -> np.ndarray:
        """``(count, len(candidates))`` results for the view's seat, in pips: determinizations
        ``first .. first + count - 1`` of stream ``base`` (those of ``run_rollouts``), every
        candidate on each. With a ``pool``, one block of determinizations per thread (the
        kernels and BLAS release the GIL; a row's value is a function of its world alone)."""
        if pool is not None and count > 1:
            return pool.blocks(
                first, count, lambda at, n, block_sc: self.results(det, base, at, n, candidates, block_sc)
            )
        states = rollout.advance_states(det, base, first, count, candidates, self.danger, sc)
        return self._values(states, det.game.tables, det.view.seat, sc)

    def _values(self, states: np.ndarray, tb: np.ndarray, seat: int, sc: Any) -> np.ndarray:
        """The ``(count, k)`` results of advanced states ``(count, k, STATE_SIZE)``, each played
        on (in place) to the round's end with the seat's choices the network's argmax."""
        count, k = states.shape[:2]
        flat = states.reshape(-1, states.shape[-1])
        out = np.zeros(flat.shape[0], np.float64)
        over = np.zeros(flat.shape[0], np.bool_)
        rollout.results_rows(flat, np.arange(flat.shape[0]), tb, seat, over, out)
        legal = np.empty(engine.MAX_MOVES, np.int64)
        for _ in range(_TO_THE_END):
            rows = np.flatnonzero(~over)
            if not rows.size:
                return out.reshape(count, k)
            obs = np.empty((rows.size, self.obs_size), np.float32)
            masks = np.empty((rows.size, self.num_actions), np.int8)
            rollout.observe_rows(flat, rows, tb, seat, obs, masks, legal)
            logits = self.net.logits(obs, masks)
            rollout.step_rows(flat, rows, tb, seat, logits.argmax(1).astype(np.int64), self.danger, sc)
            rollout.results_rows(flat, rows, tb, seat, over, out)  # only the rows that moved
        raise RuntimeError(f"a round went on past {_TO_THE_END} choices of one seat")
