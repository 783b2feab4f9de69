"""Self-play collection over a slice of the run's games, and how slices add up to the run.

A :class:`Collector` owns the games ``first .. first + count - 1`` of a run of
``num_games`` games: a :class:`BatchedMexicanTrain` of that many games, their seat book
(:mod:`training.selfplay.seatbook`), their league seats and a copy of the policy. What it
collects depends on each game's index only, never on which other games share its
collector, so a run split into slices collects exactly the data of one collector owning
every game:

* the deals: game ``i`` is game ``i`` of ``BatchedMexicanTrain.reset(seed)``
  (:func:`initial_state` deals them all, then each collector loads its slice);
* the sampled actions: by inverse CDF with a uniform that is a hash of
  ``(seed, i, step)`` (:func:`uniforms`), not a shared generator's next draw;
* the league seats of game ``i``: drawn from ``default_rng([seed, 2, i, k])`` at its
  ``k``-th round start;
* the forward passes: one per block of :data:`INFER_GAMES` games of the run (a matrix
  product's rounding depends on how many rows it holds), so a collector's slice is made
  of whole blocks (:func:`slices`).

The decisions of several collectors are put back in one collector's order by their
``(when, game)`` key (:func:`merge_batches`); their states (:meth:`Collector.state_dict`)
add up to one collector's (:func:`merge_states`) and split back (:func:`split_state`):
a checkpoint is the same file whatever the number of collectors that wrote it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import torch as th

from agents.mexican_train.tilenet import NetSpec, build_net
from mtrain_env.mexican_train.compiled.batch import SNAPSHOT_ARRAYS, BatchedMexicanTrain
from mtrain_env.mexican_train.compiled.batched_planner import BatchedPlanner
from mtrain_env.mexican_train.core.config import GameConfig
from training.selfplay.config import SelfPlayConfig
from training.selfplay.seatbook import Batch, SeatBook

__all__ = [
    "INFER_GAMES",
    "Collector",
    "Collectors",
    "LocalCollectors",
    "initial_state",
    "merge_batches",
    "merge_states",
    "slices",
    "split_state",
    "uniforms",
]

#: games of the run per forward pass (the block a collector's slice is made of)
INFER_GAMES = 64
#: the book's arrays a state carries for the chains' tails
_BOOK_ROWS = ("obs", "mask", "action", "logp", "value", "reward", "when")

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, elementwise on a uint64 array."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * _M1
        x = x ^ (x >> np.uint64(27))
        x = x * _M2
        return x ^ (x >> np.uint64(31))


def uniforms(seed: int, games: np.ndarray, when: int) -> np.ndarray:
    """One uniform in ``[0, 1)`` per game of ``games`` (the run's indices) for step ``when``
    of a run seeded ``seed``: a function of the three, whoever computes it."""
    key = np.random.SeedSequence([seed, 3]).generate_state(1, np.uint64)[0]
    with np.errstate(over="ignore"):
        x = _mix(np.full(games.shape, key, np.uint64) ^ (games.astype(np.uint64) * _GOLDEN))
        x = _mix(x + np.uint64(when) * _GOLDEN)
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def slices(num_games: int, count: int) -> list[tuple[int, int]]:
    """``count`` contiguous ``(first, stop)`` slices of whole :data:`INFER_GAMES` blocks
    covering ``num_games`` games, in order; ``ValueError`` if there are fewer blocks."""
    blocks = -(-num_games // INFER_GAMES)
    if not 1 <= count <= blocks:
        raise ValueError(
            f"{count} collectors need at least {count} blocks of {INFER_GAMES} games "
            f"(more than {INFER_GAMES * (count - 1)} games), got {num_games} games"
        )
    edges = [min(num_games, (i * blocks // count) * INFER_GAMES) for i in range(count + 1)]
    return list(itertools.pairwise(edges))


def _draw_row(config: SelfPlayConfig, game: int, k: int) -> np.ndarray:
    """The opponent seats of ``game`` (the run's index) at its ``k``-th league draw."""
    n = config.num_players
    rng = np.random.default_rng([config.seed, 2, game, k])
    count = config.opponent_seats or int(rng.integers(1, n))
    row = np.zeros(n, np.bool_)
    row[rng.choice(n, count, replace=False)] = True
    return row


def initial_state(config: SelfPlayConfig) -> dict[str, Any]:
    """The state of a run's games before its first rollout (every game, as one
    collector's :meth:`Collector.state_dict`): the deals, the first league seats, no decisions."""
    env = BatchedMexicanTrain(
        config.num_games, copy=False, num_players=config.num_players, max_pips=config.max_pips
    )
    env.reset(seed=config.seed)
    n, b = config.num_players, config.num_games
    opponent = np.zeros((b, n), np.bool_)
    draws = np.zeros(b, np.int64)
    for g in range(config.league_games):
        opponent[g] = _draw_row(config, g, 0)
        draws[g] = 1
    book = {
        "obs": np.zeros((0, env.obs_size), np.float32),
        "mask": np.zeros((0, env.num_actions), np.bool_),
        "action": np.zeros(0, np.int64),
        "logp": np.zeros(0, np.float32),
        "value": np.zeros(0, np.float32),
        "reward": np.zeros(0, np.float64),
        "when": np.zeros(0, np.int64),
        "last": np.full((b, n), -1, np.int64),
    }
    return {
        "env": env.state_dict(),
        "book": book,
        "league": {"opponent": opponent, "draws": draws},
        "clock": 0,
    }


def merge_states(states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The state of one collector of every game from those of consecutive slices, in
    order (the inverse of :func:`split_state`)."""
    envs = [s["env"] for s in states]
    env = {
        **envs[0],
        "num_games": sum(e["num_games"] for e in envs),
        "arrays": {k: np.concatenate([e["arrays"][k] for e in envs]) for k in SNAPSHOT_ARRAYS},
        "rngs": [r for e in envs for r in e["rngs"]],
    }
    lasts, offset = [], 0
    for s in states:
        last = s["book"]["last"]
        lasts.append(np.where(last >= 0, last + offset, -1))
        offset += s["book"]["obs"].shape[0]
    last = np.concatenate(lasts)
    rows = {k: np.concatenate([s["book"][k] for s in states]) for k in _BOOK_ROWS}
    # one collector's book holds its tails in (when, game) order
    game_of = np.zeros(offset, np.int64)
    live = last >= 0
    game_of[last[live]] = np.nonzero(live)[0]
    order = np.lexsort((game_of, rows["when"]))
    remap = np.zeros(offset + 1, np.int64)  # + 1: a slot for no row
    remap[order] = np.arange(offset)
    book = {k: v[order] for k, v in rows.items()}
    book["last"] = np.where(live, remap[np.maximum(last, 0)], -1)
    league = {k: np.concatenate([s["league"][k] for s in states]) for k in ("opponent", "draws")}
    clocks = {int(s["clock"]) for s in states}
    if len(clocks) != 1:
        raise ValueError(f"the collectors' states are of different steps {sorted(clocks)}")
    return {"env": env, "book": book, "league": league, "clock": clocks.pop()}


def split_state(state: Mapping[str, Any], first: int, stop: int) -> dict[str, Any]:
    """The state of the collector of games ``first .. stop - 1`` in one of every game."""
    env = state["env"]
    part_env = {
        **env,
        "num_games": stop - first,
        "arrays": {k: env["arrays"][k][first:stop] for k in SNAPSHOT_ARRAYS},
        "rngs": list(env["rngs"][first:stop]),
    }
    book = state["book"]
    last = book["last"][first:stop]
    rows = np.sort(last[last >= 0])
    remap = np.full(book["obs"].shape[0] + 1, -1, np.int64)  # + 1: a slot for no row
    remap[rows] = np.arange(rows.size)
    part_book = {k: book[k][rows] for k in _BOOK_ROWS}
    part_book["last"] = np.where(last >= 0, remap[np.maximum(last, 0)], -1)
    league = {k: state["league"][k][first:stop] for k in ("opponent", "draws")}
    return {"env": part_env, "book": part_book, "league": league, "clock": int(state["clock"])}


def merge_batches(batches: Sequence[Batch]) -> Batch:
    """The decisions of several collectors' batches in one collector's order (by
    ``(when, game)``); a single batch as it is."""
    if len(batches) == 1:
        return batches[0]
    names = list(Batch.__dataclass_fields__)
    joined = {k: np.concatenate([getattr(b, k) for b in batches]) for k in names}
    order = np.lexsort((joined["game"], joined["when"]))
    return Batch(**{k: v[order] for k, v in joined.items()})


def net_spec(config: SelfPlayConfig) -> NetSpec:
    """The network of ``config``'s runs."""
    game = GameConfig.make(num_players=config.num_players, max_pips=config.max_pips)
    return NetSpec.make(config.net, game, config.hidden, config.pair_hidden)


class Collector:
    """The games ``first .. stop - 1`` of a run of ``config`` (see the module docstring).

    ``net``: the policy to act with (the learner's own, when it shares this process and
    device); ``None`` builds a copy, its weights set by :meth:`set_weights`."""

    def __init__(
        self, config: SelfPlayConfig, first: int, stop: int, net: th.nn.Module | None = None
    ) -> None:
        self.config = c = config
        self.first, self.stop = first, stop
        count = stop - first
        self.env = BatchedMexicanTrain(count, copy=False, num_players=c.num_players, max_pips=c.max_pips)
        self.net = net if net is not None else build_net(net_spec(c), seed=c.seed).eval()
        n = self.env.num_players
        self.book = SeatBook(count, n, self.env.obs_size, self.env.num_actions, c.steps * count, first)
        self.planner = BatchedPlanner(self.env.game.tables) if c.opponents == "planner" else None
        self.opponent = np.zeros((count, n), np.bool_)
        self.draws = np.zeros(count, np.int64)
        #: how many of this slice's games are league games (the run's first ones)
        self.league_games = max(0, min(count, c.league_games - first))
        self._games = np.arange(count)
        self.clock = 0  #: env steps taken since the run began
        self.league_moves = 0  #: decisions played by opponent seats in the last rollout
        self.rounds = 0  #: rounds finished in the last rollout
        self.obs = self.mask = self.seat = np.zeros(0)

    def set_weights(self, weights: Mapping[str, np.ndarray]) -> None:
        """Load the policy's weights (numpy arrays of its ``state_dict``)."""
        self.net.load_state_dict({k: th.from_numpy(np.array(v)) for k, v in weights.items()})
        self.net.eval()

    # -------------------------------------------------------------- acting
    def _draw_opponents(self, games: np.ndarray) -> None:
        """New opponent seats for league ``games`` (local indices) whose round starts; a
        learner seat handed to an opponent ends its chain."""
        for g in games.tolist():
            row = _draw_row(self.config, self.first + g, int(self.draws[g]))
            self.draws[g] += 1
            handed = np.flatnonzero(row & ~self.opponent[g])
            self.book.close(np.full(handed.size, g), handed)
            self.opponent[g] = row

    def _act(self) -> np.ndarray:
        """Actions of every game's seat on turn (opponent seats play the league's moves,
        never recorded; the learner's real choices are sampled and recorded)."""
        mask = self.mask
        legal = mask.sum(1)
        league = self.opponent[self._games, self.seat]
        choice = np.flatnonzero((legal > 1) & ~league)
        actions = mask.argmax(1).astype(np.int64)  # the only legal action of forced games
        if self.planner is not None:
            games = np.flatnonzero(league)
            actions[games] = self.planner.act(self.env.states, games)
            self.league_moves += games.size
        if choice.size:
            self._choose(choice, actions)
        return actions

    def _choose(self, choice: np.ndarray, actions: np.ndarray) -> None:
        """The learner's actions in the games ``choice`` (written into ``actions``), recorded:
        a sample of the policy (one forward pass per block of the run's games), with its
        log-probability and value."""
        blocks = (choice + self.first) // INFER_GAMES
        cuts = np.flatnonzero(np.diff(blocks)) + 1
        logp_parts, value_parts = [], []
        with th.no_grad():
            for part in np.split(choice, cuts):
                logits, value = self.net(
                    th.from_numpy(self.obs[part]), th.from_numpy(self.mask[part].astype(np.bool_))
                )
                logp_parts.append(th.log_softmax(logits, dim=1).numpy())
                value_parts.append(value.numpy())
        logp_all = np.concatenate(logp_parts)
        u = uniforms(self.config.seed, choice + self.first, self.clock)
        cum = np.cumsum(np.exp(logp_all.astype(np.float64)), axis=1)
        picked = (cum <= (u * cum[:, -1])[:, None]).sum(1)
        actions[choice] = picked
        self.book.record(
            choice,
            self.seat[choice],
            self.obs[choice],
            self.mask[choice],
            picked,
            logp_all[np.arange(choice.size), picked],
            np.concatenate(value_parts),
            self.clock,
        )

    def collect(self) -> Batch:
        """One rollout of ``steps`` env steps in every game of the slice; its trainable
        decisions (``when`` and ``game`` their key in the run)."""
        c = self.config
        book = self.book
        book.begin()
        self.league_moves = self.rounds = 0
        for _ in range(c.steps):
            actions = self._act()
            self.obs, self.mask, self.seat, rewards, terminated, info = self.env.step(actions)
            book.credit(rewards, terminated)
            self.rounds += int(info["round_over"].sum())
            self.clock += 1
            if self.league_games:
                self._draw_opponents(np.flatnonzero(info["round_over"][: self.league_games]))
        return book.finish(c.gamma, c.lam)

    # --------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """Everything the slice's future depends on, at a rollout boundary."""
        book = self.book
        book.begin()  # only the tails remain; they are what the next rollout starts with
        k = book.size
        rows = {name: getattr(book, name)[:k].copy() for name in _BOOK_ROWS}
        return {
            "env": self.env.state_dict(),
            "book": {**rows, "last": book.last.copy()},
            "league": {"opponent": self.opponent.copy(), "draws": self.draws.copy()},
            "clock": self.clock,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` (the games first: a bad snapshot changes nothing)."""
        self.obs, self.mask, self.seat = self.env.load_state_dict(state["env"])
        b, book = state["book"], self.book
        k = b["obs"].shape[0]
        for name in _BOOK_ROWS:
            getattr(book, name)[:k] = b[name]
        book.done[:k] = False
        book.next[:k] = -1
        book.last[...] = b["last"]
        live = book.last >= 0
        book.game[book.last[live]] = np.nonzero(live)[0] + self.first
        book.size = k
        book._chunks = [0] if k else []
        self.opponent[...] = state["league"]["opponent"]
        self.draws[...] = state["league"]["draws"]
        self.clock = int(state["clock"])


class Collectors(Protocol):
    """Who collects a run's rollouts: the learner's own process, or Ray actors."""

    def collect(self, weights: Callable[[], dict[str, np.ndarray]]) -> list[tuple[Batch, dict[str, float]]]:
        """One rollout of every slice, in slice order: its batch and counts (``rounds``,
        ``league_moves``); ``weights()`` gives the policy's weights where a copy needs them."""
        ...

    def state_dict(self) -> dict[str, Any]:
        """The state of every game, as one collector's."""
        ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict` (a state of every game)."""
        ...

    def close(self) -> None:
        """Release what collecting holds (actors, a Ray instance it started)."""
        ...


class LocalCollectors:
    """One collector of every game, in the learner's process (``net``: the learner's
    network when it is on the CPU, else ``None``: a CPU copy, its weights set each rollout)."""

    def __init__(self, config: SelfPlayConfig, net: th.nn.Module | None) -> None:
        self.shared = net is not None
        self.collector = Collector(config, 0, config.num_games, net)

    def collect(self, weights: Callable[[], dict[str, np.ndarray]]) -> list[tuple[Batch, dict[str, float]]]:
        c = self.collector
        if not self.shared:
            c.set_weights(weights())
        batch = c.collect()
        return [(batch, {"rounds": float(c.rounds), "league_moves": float(c.league_moves)})]

    def state_dict(self) -> dict[str, Any]:
        return self.collector.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.collector.load_state_dict(state)

    def close(self) -> None:
        return None
