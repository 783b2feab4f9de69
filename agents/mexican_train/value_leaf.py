"""Leaves of a self-play network for ``mc``: ``leaf="policy"`` plays the searching seat's
later choices by the network to the round's end; ``leaf="value"`` reads its value head at
the seat's next real choice (after ``depth`` choices of the network). Both replace the
chain policy's rollouts of the seat's own hand.

A chain rollout scores a candidate by how the CHAIN policy would go on playing the seat's
hand, on one world: its result swings by tens of pips from world to world, and its
preferences are the chain policy's. Here each candidate is played on each determinized
world only until the seat's next real choice (the other seats by the chain policy, forced
moves as they come: :func:`~mtrain_env.mexican_train.compiled.rollout.advance_to_choice`),
optionally for ``depth`` more of the seat's own choices made by the network's argmax,
and the state reached is valued by the network's value head on the seat's OWN observation
of it (what the seat would see there; trained on exactly such observations by self-play).
A round that ends first is scored exactly; with ``depth=None`` (``leaf="policy"``) every
round is played to its end by the network (for the seat) and the chain policy (for the
others), and scored exactly. Values are in pips, the scale of
:func:`agents.mexican_train.rollout_policies.round_result` (the self-play ``zero_sum`` reward times the
hand size times N).

Every world's candidates are valued in one batched forward pass per step of the seat, in
numpy float32 (no torch; within float32 rounding of the ``ppo`` agent's float64), BLAS on
one thread; ``results`` can split the worlds over a rollout thread pool, one block each.
Deterministic: the worlds are ``mc``'s, the network's argmax and value are functions of
the observation.
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
    ``ValueError`` for any other file (only self-play files carry a value head)."""
    key = str(Path(path).resolve())
    net = _NETS.get(key)
    if net is None:
        if not Path(path).is_file():
            raise FileNotFoundError(f"no policy file at {path}")
        if not is_selfplay_policy(path):
            raise ValueError(
                "a network leaf needs a self-play policy file "
                f"(mtrain selfplay: a policy and a value head), got {path}"
            )
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
    """Candidates valued by ``net`` on determinized worlds of one game config (module docstring).

    Args:
        net: a self-play network for ``config``'s table (``ValueError`` otherwise).
        config: the game's config.
        depth: the seat's own later choices made by the network before the value is read;
            ``None``: all of them (the round is played out and scored, no value is read).
        danger: the chain policy's ``danger`` (as ``mc``'s rollouts).
    """

    def __init__(
        self,
        net: NumpyTileNet | NumpyMlpNet,
        config: GameConfig,
        depth: int | None = 0,
        danger: int = 2,
    ) -> None:
        check_table(net, config)
        _one_blas_thread()
        self.net = net
        self.depth = _TO_THE_END if depth is None else depth
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
        """``(count, len(candidates))`` values for the view's seat, in pips: determinizations
        ``first .. first + count - 1`` of stream ``base`` (those of ``run_rollouts``), every
        candidate on each. With a ``pool``, one block of determinizations per thread (the
        kernels and BLAS release the GIL; a row's value is a function of its world alone)."""
        if pool is not None and count > 1:
            return pool.blocks(
                first, count, lambda at, n, block_sc: self.results(det, base, at, n, candidates, block_sc)
            )
        states = rollout.advance_states(det, base, first, count, candidates, self.danger, sc)
        return self._values(states, det.game.tables, det.view.seat, sc)

    def results_on(
        self, roots: np.ndarray, tb: np.ndarray, seat: int, candidates: list[int], sc: Any
    ) -> np.ndarray:
        """``(len(roots), len(candidates))`` values for ``seat``, in pips, on worlds the caller
        dealt (``roots``: full compiled states, ``seat`` on turn), every candidate on each."""
        states = np.empty((roots.shape[0], len(candidates), roots.shape[1]), np.int64)
        cand = np.array(candidates, np.int64)
        rollout.advance_roots(roots, tb, cand, seat, self.danger, states, sc)
        return self._values(states, tb, seat, sc)

    def _values(self, states: np.ndarray, tb: np.ndarray, seat: int, sc: Any) -> np.ndarray:
        """The ``(count, k)`` values of advanced states ``(count, k, STATE_SIZE)`` (in place)."""
        count, k = states.shape[:2]
        flat = states.reshape(-1, states.shape[-1])
        out = np.zeros(flat.shape[0], np.float64)
        over = np.zeros(flat.shape[0], np.bool_)
        rollout.results_rows(flat, np.arange(flat.shape[0]), tb, seat, over, out)
        scale = float(tb[engine.K_HAND_SIZE] * tb[engine.K_PIPS])
        legal = np.empty(engine.MAX_MOVES, np.int64)
        for step in range(self.depth + 1):
            rows = np.flatnonzero(~over)
            if not rows.size:
                break
            obs = np.empty((rows.size, self.obs_size), np.float32)
            masks = np.empty((rows.size, self.num_actions), np.int8)
            rollout.observe_rows(flat, rows, tb, seat, obs, masks, legal)
            if step == self.depth:
                out[rows] = self.net(obs, masks)[1] * scale
                break
            logits = self.net.logits(obs, masks)  # the value head is read at the leaf only
            if step == _TO_THE_END - 1:
                raise RuntimeError(f"a round went on past {_TO_THE_END} choices of one seat")
            rollout.step_rows(flat, rows, tb, seat, logits.argmax(1).astype(np.int64), self.danger, sc)
            rollout.results_rows(flat, rows, tb, seat, over, out)  # only the rows that moved
        return out.reshape(count, k)
