"""Inference of hidden hands from the opponents' observed plays (for ``mc_infer``).

Shown voids (:func:`mtrain_env.mexican_train.core.public.sample_state`) say which pips a
seat lacks when it draws or passes; a *play* says something too. A planner-like opponent
sheds heavy tiles: a seat that laid a light tile on a value ``e`` while holding heavy
``e`` tiles is less likely than one that held none. This module turns that into weights of
sampled worlds:

* :class:`PlayTracker` attributes plays to seats from the observing seat's successive
  :class:`PublicView` s only (no action log, nothing hidden): a tile that appeared on seat
  ``q``'s OWN train while that train carried no marker at either view was laid by ``q``
  (R10/R16/R17: nobody else may play on an unmarked personal train, and a marker laid in
  between stays until ``q`` itself plays again), except a tile right after a double: an
  unsatisfied double (R13, R20) is covered by whichever seat comes next, on any train. Plays
  on the Mexican train and on marked trains are ambiguous and not used. Variants where
  someone else's play lifts a marker (``marker_off_by_any_play_on_it``) break the argument:
  nothing is attributed there.
* :class:`OpponentModel`: per sampled world, ``sum log P(play | world)`` under a
  chain-keeping opponent model (the planner lays its own train along its longest chain):
  the seat chose its tile among the tiles it then held matching the end ``e``, a tile it
  could follow up being ``exp(beta)`` times likelier than one it could not. Its hand then =
  its hand in the world now plus the tiles it is seen to have laid since (draws in between
  are ignored: an approximation).

``mc_infer`` resamples its determinizations by these weights (sampling importance
resampling). :func:`fit` measures the model's log-likelihood of planner plays for several
``beta`` (``python -m agents.mexican_train.inference``), and :func:`placement` how well
the weighted worlds place the hidden tiles, both over :func:`planner_positions` (planner
self-play that reads the truth at each decision, for measuring; ``training.hand_model``
fits and measures its model over it too).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from tqdm import tqdm

from mtrain_env.cli import int_at_least, non_negative_float, players_or_exit
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import PublicView
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.interrupts import run_main
from mtrain_env.tilegame.tiles import bits_list


@dataclass(frozen=True)
class Play:
    """One attributed play: ``seat`` laid ``tile`` on an open end of value ``end``."""

    seat: int
    tile: int
    end: int


def train_ends(config: GameConfig, engine: int, train: tuple[int, ...]) -> list[int]:
    """The open end before each tile of ``train`` (laid from the ``engine`` outward, R7)."""
    tiles = config.tiles
    width = config.max_pips + 1
    out = []
    end = engine
    for t in train:
        out.append(end)
        end = tiles.other_end[t * width + end]
    return out


class PlayTracker:
    """The plays of the opponents that one seat can attribute, from its views of one round.

    Call :meth:`update` with the seat's view at EVERY decision it makes (in order); a new
    round (or a new game: :meth:`reset`) starts afresh.
    """

    def __init__(self) -> None:
        self.prev: PublicView | None = None
        self.plays: list[Play] = []

    def reset(self) -> None:
        self.prev = None
        self.plays = []

    def update(self, view: PublicView) -> None:
        prev = self.prev
        self.prev = view
        if prev is None or not _follows(prev, view):
            self.plays = []  # a new round or game (or views out of order): start afresh
            return
        if view.config.marker_off_by_any_play_on_it:
            return
        for q in range(view.config.num_players):
            if q == view.seat or prev.markers[q] or view.markers[q]:
                continue
            old = len(prev.trains[q])
            train = view.trains[q]
            if len(train) <= old:
                continue
            ends = train_ends(view.config, view.engine, train)
            # a tile after a double (R2) may be another seat's: an unsatisfied double (R13,
            # R20) is covered by whoever comes next, on any train
            doubles = view.config.tiles.doubles
            self.plays.extend(
                Play(q, train[i], ends[i])
                for i in range(old, len(train))
                if not (i > 0 and doubles >> train[i - 1] & 1)
            )


def _follows(prev: PublicView, view: PublicView) -> bool:
    """Whether ``view`` can come after ``prev`` in one round of one game (same seat and
    round, every train extended, no tile back in the boneyard)."""
    return (
        prev.seat == view.seat
        and prev.round_index == view.round_index
        and prev.config == view.config
        and prev.engine == view.engine
        and prev.table & view.table == prev.table
        and all(new[: len(old)] == old for old, new in zip(prev.trains, view.trains, strict=True))
    )


class OpponentModel:
    """The chain-keeping opponent model, evaluated on batches of worlds.

    The planner lays its own train along its longest chain, so the tile it lays on an end
    ``e`` is one it can follow up: among the tiles of its hand matching ``e``, a tile ``y``
    scores ``beta`` when the rest of the hand holds a tile matching ``y``'s other half
    (a continuation), else 0, and the play is drawn by softmax of the scores. ``beta = 0``
    is a uniform choice among the matching tiles. The default ``beta`` is the maximum
    likelihood fit on planner games (:func:`fit`).

    Args:
        config: the game's rules (the tile set).
        beta: the weight of a continuation (>= 0).
    """

    def __init__(self, config: GameConfig, beta: float) -> None:
        if not beta >= 0:
            raise ValueError(f"beta must be >= 0, got {beta}")
        self.config = config
        self.beta = float(beta)
        tiles = config.tiles
        pips = config.max_pips + 1
        #: pips[t, v] = 1 if tile t has a v half
        self.has_pip = np.array(
            [[v in tiles.tiles[t] for v in range(pips)] for t in range(tiles.num_tiles)], np.int64
        )

    def play_log_likelihood(self, hand: int, tile: int, end: int) -> float:
        """``log P(tile | hand)`` for a seat holding ``hand`` (``tile`` included) laying on ``end``."""
        tiles = self.config.tiles
        width = self.config.max_pips + 1

        def score(y: int) -> float:
            other = tiles.other_end[y * width + end]
            return self.beta if hand & ~(1 << y) & tiles.match[other] else 0.0

        alts = bits_list(hand & tiles.match[end])
        return score(tile) - math.log(sum(math.exp(score(y)) for y in alts))

    def log_likelihoods(self, view: PublicView, plays: list[Play], owners: np.ndarray) -> np.ndarray:
        """``sum log P(play | world)`` per world (:meth:`scorer` for many batches)."""
        return self.scorer(view, plays)(owners)

    def scorer(self, view: PublicView, plays: list[Play]) -> Callable[[np.ndarray], np.ndarray]:
        """``owners -> sum log P(play | world)`` per world, the plays' tables built once.

        ``owners[w, u]`` is the seat holding the ``u``-th unseen tile (``bits_list(view.unseen)``
        order) in world ``w``, or -1 (the boneyard). A seat's hand when it laid a tile is
        its hand in the world plus the tiles it laid from then on (this round). Every play
        is scored at once: per play, its alternatives among the unseen tiles and among the
        tiles it is known to have held, padded to one width.
        """
        if not plays:
            return lambda owners: np.zeros(owners.shape[0], np.float64)
        tiles = self.config.tiles
        width = self.config.max_pips + 1
        beta = self.beta
        unseen = bits_list(view.unseen)
        unseen_pips = self.has_pip[unseen]  # (unseen, pips)
        seats = np.array([p.seat for p in plays], np.int64)
        fixed_counts = np.zeros((len(plays), width), np.int64)
        alt_u: list[list[int]] = []  # per play: unseen alternatives (indices into unseen)
        alt_uo: list[list[int]] = []  # their other halves
        alt_fo: list[list[int]] = []  # per play: the other halves of the known-held alternatives
        own_o = np.zeros(len(plays), np.int64)
        later: dict[int, int] = {}
        for k in range(len(plays) - 1, -1, -1):
            play = plays[k]
            fixed = later.get(play.seat, 0) | 1 << play.tile
            later[play.seat] = fixed
            fixed_counts[k] = self.has_pip[bits_list(fixed)].sum(axis=0)
            match = tiles.match[play.end]
            us = [u for u, y in enumerate(unseen) if match >> y & 1]
            alt_u.append(us)
            alt_uo.append([tiles.other_end[unseen[u] * width + play.end] for u in us])
            alt_fo.append([tiles.other_end[y * width + play.end] for y in bits_list(fixed & match)])
            own_o[k] = tiles.other_end[play.tile * width + play.end]
        alt_u.reverse()
        alt_uo.reverse()
        alt_fo.reverse()
        u_idx, u_valid = _padded(alt_u)
        uo_idx, _ = _padded(alt_uo)
        fo_idx, f_valid = _padded(alt_fo)
        rows = np.arange(len(plays))
        opponents = np.arange(view.config.num_players)

        def score(owners: np.ndarray) -> np.ndarray:
            held = owners[:, None, :] == opponents[None, :, None]  # (worlds, seats, unseen)
            counts = held.astype(np.int64) @ unseen_pips  # (worlds, seats, pips)
            c = counts[:, seats, :] + fixed_counts[None]  # (worlds, plays, pips)
            present = (owners[:, u_idx] == seats[None, :, None]) & u_valid[None]
            cont_u = np.take_along_axis(c, np.broadcast_to(uo_idx, (c.shape[0], *uo_idx.shape)), axis=2) >= 2
            cont_f = np.take_along_axis(c, np.broadcast_to(fo_idx, (c.shape[0], *fo_idx.shape)), axis=2) >= 2
            total = (present * np.exp(beta * cont_u)).sum(axis=2)
            total += (f_valid * np.exp(beta * cont_f)).sum(axis=2)
            own = beta * (c[:, rows, own_o] >= 2)
            return (own - np.log(total)).sum(axis=1)

        return score


def _padded(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Ragged int lists as a zero-padded array and its validity mask."""
    w = max(1, max(map(len, rows)))
    out = np.zeros((len(rows), w), np.int64)
    valid = np.zeros((len(rows), w), np.bool_)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
        valid[i, : len(r)] = True
    return out, valid


def resample(log_weights: np.ndarray, rng: np.random.Generator) -> int:
    """Index drawn with probability proportional to ``exp(log_weights)``."""
    w = np.exp(log_weights - log_weights.max())
    return int(rng.choice(len(w), p=w / w.sum()))


class Position(NamedTuple):
    """One decision of a planner game: the deciding seat's view and the plays it has
    attributed, the game, the true state (a copy: for labels and scoring only, never for
    play), the move the planner makes there and the env seed of the game."""

    view: PublicView
    plays: list[Play]
    game: MexicanTrain
    truth: GameState
    move: int
    seed: int


def planner_positions(players: int, seeds: Sequence[int], desc: str = "planner games") -> Iterator[Position]:
    """Every decision of planner self-play games (every seat a :class:`PlannerAgent`, one
    round each, env seeds ``seeds``), reading the truth at each: measurement and fitting
    only. Each seat's :class:`PlayTracker` is fed its own views, as an agent's would be."""
    import mtrain_env
    from agents.mexican_train.base import decision_for
    from agents.mexican_train.planner import PlannerAgent

    for seed in tqdm(seeds, desc=desc, leave=False):
        env = mtrain_env.raw_env(num_players=players)
        env.reset(seed=seed)
        planners = [PlannerAgent() for _ in range(players)]
        trackers = [PlayTracker() for _ in range(players)]
        while not all(env.terminations.values()):
            decision = decision_for(env, env.agent_selection)
            view = decision.view
            trackers[decision.seat].update(view)
            action = planners[decision.seat].act(decision)
            plays = list(trackers[decision.seat].plays)
            yield Position(view, plays, env.game, env.state_obj.copy(), decision.to_move(action), seed)
            env.step(action)


def world_owners(worlds: Sequence[GameState], tiles: Sequence[int]) -> np.ndarray:
    """``owners[w, u]``: the opponent (seats 1.., the observer is seat 0) holding ``tiles[u]``
    in ``worlds[w]``, or -1 (the boneyard): the input of :meth:`OpponentModel.scorer`."""
    seats = range(1, len(worlds[0].hands)) if worlds else range(0)
    return np.array([[next((q for q in seats if w.hands[q] >> t & 1), -1) for t in tiles] for w in worlds])


def fit(betas: Sequence[float], seeds: Sequence[int], players: int = 4) -> tuple[int, dict[float, float]]:
    """Mean log-likelihood, per ``beta``, of the plays ``planner`` seats make on their own
    unmarked trains in planner self-play games (one round, the given env seeds): the
    plays the tracker attributes, scored with the seat's TRUE hand (fitting data only)."""
    config = GameConfig.make(num_players=players)
    models = {b: OpponentModel(config, b) for b in betas}
    totals = dict.fromkeys(betas, 0.0)
    count = 0
    for view, _plays, game, s, move, _seed in planner_positions(players, seeds):
        if move < game.draw:
            tile, train = divmod(move, game.width)
            if train == view.seat and not s.markers[train]:
                for b, model in models.items():
                    totals[b] += model.play_log_likelihood(s.hands[train], tile, s.ends[train])
                count += 1
    return count, {b: t / max(count, 1) for b, t in totals.items()}


def placement(beta: float, seeds: Sequence[int], players: int = 4, pool: int = 64) -> tuple[float, float]:
    """How many of the opponents' hidden tiles a world puts in the right hand, on average
    over seat 0's decisions in planner games: the prior's worlds (``sample_state``) and the
    same worlds weighted by the model (the posterior mean). Evaluation only: the truth is
    read to score the worlds, never to weight them."""
    from mtrain_env.mexican_train.core.public import sample_state

    model = OpponentModel(GameConfig.make(num_players=players), beta)
    prior = posterior = 0.0
    count = 0
    last: MexicanTrain | None = None
    rng = np.random.default_rng(0)
    for view, plays, game, state, _move, seed in planner_positions(players, seeds):
        if game is not last:  # a new game (a new env): its worlds are drawn from its seed
            last, rng = game, np.random.default_rng(seed)
        truth = state.hands
        hidden = sum(truth[q].bit_count() for q in range(1, players))
        if view.seat != 0 or not plays or not hidden:
            continue
        unseen = bits_list(view.unseen)
        worlds = [sample_state(game, view, rng) for _ in range(pool)]
        owners = world_owners(worlds, unseen)
        right = np.array(
            [sum((w.hands[q] & truth[q]).bit_count() for q in range(1, players)) / hidden for w in worlds]
        )
        logw = model.log_likelihoods(view, plays, owners)
        w = np.exp(logw - logw.max())
        prior += float(right.mean())
        posterior += float((w * right).sum() / w.sum())
        count += 1
    return prior / max(count, 1), posterior / max(count, 1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(
        prog="python -m agents.mexican_train.inference",
        description="Fit the opponent model's beta: log-likelihood of planner plays.",
    )
    parser.add_argument("--games", type=int_at_least(1), default=30, help="planner games (default 30)")
    parser.add_argument("--seed", type=int_at_least(0), default=100, help="first env seed (default 100)")
    parser.add_argument("--players", type=int_at_least(2), default=4, help="seats, double-12 set (default 4)")
    parser.add_argument("--betas", type=non_negative_float, nargs="+", default=[0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    parser.add_argument(
        "--placement",
        type=non_negative_float,
        default=None,
        metavar="BETA",
        help="also score worlds against the truth, weighted with this beta",
    )
    parser.add_argument(
        "--pool", type=int_at_least(1), default=64, help="worlds a placement pool holds (default 64)"
    )
    args = parser.parse_args(argv)
    players_or_exit(parser, args.players)
    seeds = range(args.seed, args.seed + args.games)
    count, means = fit(args.betas, seeds, args.players)
    print(f"{count} own-train planner plays of {args.games} games (seeds {seeds[0]}..{seeds[-1]})")
    print("beta   mean log-likelihood")
    for b, m in means.items():
        print(f"{b:4.1f}   {m:.4f}")
    if args.placement is not None:
        prior, post = placement(args.placement, seeds, args.players, args.pool)
        print(
            f"hidden tiles in the right hand (beta={args.placement}): prior {prior:.2%}, weighted {post:.2%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m agents.mexican_train.inference"))
