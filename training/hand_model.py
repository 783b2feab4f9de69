"""Train and measure the hand model (:mod:`agents.mexican_train.hand_model`).

``python -m training.hand_model --players 4 --out agents/policies/hands_4p.npz``
plays planner games (every seat a planner, the pure env), records at every decision of
every seat the public features of each hidden tile and place with the tile's TRUE place
(offline labels: the truth is read here to train, never at play), fits the network by
full-batch Adam on the per-tile cross-entropy (torch), and reports on held-out games
(other seeds):

* the per-tile log-loss of the model against the counts-only prior (``p`` proportional to
  the places' tile counts among the places the voids allow: what uniform deals give);
* placement: how many of the opponents' hidden tiles a world puts in the right hand, on
  average, for the prior's worlds (``sample_state``) and for the same pool of worlds
  resampled by the model at each ``alpha`` (the posterior mean; as
  :func:`agents.mexican_train.inference.placement` does for the chain-keeping model).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.hand_model import (
    HandModel,
    LearnedModel,
    count_offset,
    feature_count,
    tile_features,
)
from agents.mexican_train.history import DEFAULT_THIN, HistorySampler, history_factory
from agents.mexican_train.inference import OpponentModel, planner_positions, world_owners
from agents.mexican_train.oracle_champion import partly_revealed
from agents.mexican_train.particles import DEFAULT_EPS, TrackerFactory, filter_factory
from agents.mexican_train.planner import PlannerAgent
from mtrain_env.cli import int_at_least, non_negative_float, players_or_exit, refuse_output
from mtrain_env.mexican_train.core.public import PublicView, sample_state
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.files import atomic_writer
from mtrain_env.tilegame.interrupts import run_main


def true_places(state: GameState, seat: int, unseen: list[int]) -> np.ndarray:
    """The place index (opponents in absolute order, the observer skipped, then the
    boneyard) of each hidden tile in the true state."""
    n = len(state.hands)
    opponents = [q for q in range(n) if q != seat]
    out = np.full(len(unseen), n - 1, np.int64)
    for col, q in enumerate(opponents):
        hand = state.hands[q]
        for u, t in enumerate(unseen):
            if hand >> t & 1:
                out[u] = col
    return out


def dataset(players: int, seeds: Sequence[int], desc: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(features (N, L, F), allowed (N, L), labels (N,))`` over every hidden tile of every decision."""
    xs, masks, ys = [], [], []
    for view, plays, _game, truth, _move, _seed in planner_positions(players, seeds, desc):
        feats, allowed, unseen = tile_features(view, plays)
        if not unseen:
            continue
        labels = true_places(truth, view.seat, unseen)
        if not allowed[np.arange(len(unseen)), labels].all():
            raise AssertionError("a tile's true place is not allowed by the shown voids: a feature bug")
        xs.append(feats)
        masks.append(allowed)
        ys.append(labels)
    return np.concatenate(xs), np.concatenate(masks), np.concatenate(ys)


def fit(
    x: np.ndarray,
    allowed: np.ndarray,
    y: np.ndarray,
    players: int,
    max_pips: int,
    hidden: int,
    epochs: int,
    seed: int,
    batch: int = 4096,
) -> HandModel:
    """Minibatch Adam on the masked per-tile cross-entropy; the fitted :class:`HandModel`
    (its logits start from the counts-only prior, :func:`count_offset`)."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    f = feature_count(players)
    first, last = torch.nn.Linear(f, hidden), torch.nn.Linear(hidden, 1)
    net = torch.nn.Sequential(first, torch.nn.ReLU(), last)
    torch.nn.init.zeros_(last.weight)  # the prior to begin with
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    xt = torch.from_numpy(x)
    ot = torch.from_numpy(count_offset(x).astype(np.float32))
    mt = torch.from_numpy(allowed)
    yt = torch.from_numpy(y)
    order = np.random.default_rng(seed)
    for _epoch in tqdm(range(epochs), desc="fit (epochs)", leave=False):
        perm = torch.from_numpy(order.permutation(len(y)))
        for start in range(0, len(y), batch):
            idx = perm[start : start + batch]
            logits = (net(xt[idx]).squeeze(-1) + ot[idx]).masked_fill(~mt[idx], -1e9)
            loss = torch.nn.functional.cross_entropy(logits, yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return HandModel(
        {
            "w1": first.weight.detach().numpy().T,
            "b1": first.bias.detach().numpy(),
            "w2": last.weight.detach().numpy()[0],
            "b2": last.bias.detach().numpy()[0],
            "players": np.array(players, np.int64),
            "max_pips": np.array(max_pips, np.int64),
        }
    )


def log_losses(model: HandModel, x: np.ndarray, allowed: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Mean per-tile cross-entropy (nats) of the model and of the counts-only prior."""
    rows = np.arange(len(y))
    model_loss = -float(model.log_probs(x, allowed)[rows, y].mean())
    shares = np.where(allowed, np.exp(count_offset(x)), 0.0)  # each place's share of the hidden tiles
    prior = shares / shares.sum(axis=1, keepdims=True)
    return model_loss, -float(np.log(prior[rows, y]).mean())


def _placed_right(hands: Sequence[int], truth: Sequence[int], tiles: int = -1) -> int:
    """How many of the opponents' tiles (seats 1.., the observer is seat 0; only those in the
    bitmask ``tiles``) ``hands`` put in the hand ``truth`` has them in."""
    return sum((hands[q] & truth[q] & tiles).bit_count() for q in range(1, len(truth)))


def fitting_tiles(view: PublicView) -> int:
    """The tiles (bitmask) with a pip of some train's open end: those the next choices turn on."""
    match = view.config.tiles.match
    out = 0
    for end in set(view.ends):
        out |= match[end]
    return out


class Share:
    """Mean over seat 0's decisions of the share of the opponents' hidden tiles that worlds
    place in the right hand: all of them, and those that fit an open end
    (:func:`fitting_tiles`; decisions with none are skipped for that share).

    Also how much two of the worlds agree (the share of the hidden tiles two worlds put in
    the same hand, over pairs, weighted): for independent draws from a calibrated
    posterior it equals the placement, so agreement well above placement means the worlds
    are copies of one another more than the evidence warrants.
    """

    def __init__(self) -> None:
        self.total = self.total_fitting = self.total_agreement = 0.0
        self.decisions = self.decisions_fitting = 0

    def add(
        self, hands: Sequence[Sequence[int]], weights: np.ndarray, truth: Sequence[int], fitting: int
    ) -> None:
        """One decision: the worlds' ``hands`` with their ``weights`` (summing to 1)."""
        for mask, is_fitting in ((-1, False), (fitting, True)):
            hidden = sum((truth[q] & mask).bit_count() for q in range(1, len(truth)))
            if not hidden:
                continue
            right = np.array([_placed_right(h, truth, mask) for h in hands], dtype=float)
            share = float(np.dot(weights, right)) / hidden
            if is_fitting:
                self.total_fitting += share
                self.decisions_fitting += 1
            else:
                self.total += share
                self.decisions += 1
                self.total_agreement += _agreement(hands, weights) / hidden

    def line(self, name: str) -> str:
        fitting = self.total_fitting / max(self.decisions_fitting, 1)
        decisions = max(self.decisions, 1)
        return (
            f"    {name:<24}{self.total / decisions:>8.2%}{fitting:>16.2%}"
            f"{self.total_agreement / decisions:>14.2%}"
        )


def _agreement(hands: Sequence[Sequence[int]], weights: np.ndarray) -> float:
    """Weighted mean, over pairs of distinct worlds, of the opponents' tiles both put in the
    same hand (seats 1..; 0 with fewer than two worlds)."""
    numerator = denominator = 0.0
    for i in range(len(hands)):
        for j in range(i + 1, len(hands)):
            w = float(weights[i] * weights[j])
            if w > 0.0:
                numerator += w * _placed_right(hands[i], hands[j])
                denominator += w
    return numerator / denominator if denominator else 0.0


def placement(
    models: dict[str, LearnedModel | OpponentModel],
    players: int,
    seeds: Sequence[int],
    pool: int = 64,
    reveals: Sequence[float] = (),
) -> dict[str, Share]:
    """Share of the opponents' hidden tiles a world puts in the right hand: the prior's
    worlds, the same pool resampled by each model (posterior mean), and, for each ``reveals``
    probability ``f``, the cheating worlds of ``oracle_champion[reveal=f]`` (each hidden tile
    kept where it truly is with probability ``f``), over seat 0's decisions of planner games."""
    shares = {
        name: Share() for name in ["prior worlds", *models, *(f"truth kept, reveal={f}" for f in reveals)]
    }
    rng = np.random.default_rng(0)
    even = np.full(pool, 1.0 / pool)
    for view, plays, game, state, _move, _seed in planner_positions(players, seeds, "placement"):
        if view.seat != 0:
            continue
        truth = state.hands
        if not sum(truth[q].bit_count() for q in range(1, players)):
            continue
        fitting = fitting_tiles(view)
        unseen = view.unseen
        tiles = [t for t in range(view.config.num_tiles) if unseen >> t & 1]
        worlds = [sample_state(game, view, rng) for _ in range(pool)]
        owners = world_owners(worlds, tiles)
        hands = [w.hands for w in worlds]
        shares["prior worlds"].add(hands, even, truth, fitting)
        for name, model in models.items():
            logw = model.scorer(view, plays)(owners)
            w = np.exp(logw - logw.max())
            shares[name].add(hands, w / w.sum(), truth, fitting)
        for f in reveals:
            kept = [partly_revealed(state, view, f, rng).hands for _ in range(pool)]
            shares[f"truth kept, reveal={f}"].add(kept, even, truth, fitting)
    return shares


def tracker_placement(
    players: int, seeds: Sequence[int], factory: TrackerFactory, desc: str, truth: bool = False
) -> Share:
    """The same share for the worlds of seat 0's tracker of the move log (a particle filter
    or a history sampler, from ``factory``; the weighted mean over its worlds), fed every
    move of planner games as the play loop would. With ``truth`` a history sampler starts at
    the true history (and each opponent draw takes the tile truly drawn): if it settles
    where the fair walk does, the walk samples the posterior."""
    share = Share()
    for seed in tqdm(seeds, desc=desc, leave=False):
        env = mtrain_env.raw_env(num_players=players)
        env.reset(seed=seed)
        planners = [PlannerAgent() for _ in range(players)]
        tracker = factory(env.game, env.codec, 0, np.random.default_rng(seed))
        planted = tracker if truth and isinstance(tracker, HistorySampler) else None
        round_index = -1
        while not all(env.terminations.values()):
            decision = decision_for(env, env.agent_selection)
            state = env.state_obj
            if decision.seat == 0:
                view = decision.view
                if view.round_index != round_index:
                    tracker.start(view)
                    if planted is not None:
                        planted.plant(state)
                    round_index = view.round_index
                tracker.sync_hand(view)
                tracker.settle(view)
                share.add(
                    [w.hands for w in tracker.worlds], tracker.weights(), state.hands, fitting_tiles(view)
                )
            before = state.hands[decision.seat]
            action = planners[decision.seat].act(decision)
            env.step(action)
            move = decision.to_move(action)
            if round_index >= 0:
                tracker.observe(move)
                drawn = env.state_obj.hands[decision.seat] & ~before
                if planted is not None and decision.seat != 0 and move == env.game.draw and drawn:
                    planted.drew(decision.seat, drawn.bit_length() - 1)
    return share


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(
        prog="python -m training.hand_model",
        description="Fit the hand model on planner games and measure it on held-out games.",
    )
    parser.add_argument("--players", type=int_at_least(2), default=4)
    parser.add_argument("--games", type=int_at_least(1), default=2000, help="training games (default 2000)")
    parser.add_argument("--seed", type=int_at_least(0), default=50_000, help="first training env seed")
    parser.add_argument("--eval-games", type=int_at_least(1), default=40, help="held-out games (default 40)")
    parser.add_argument("--hidden", type=int_at_least(1), default=64, help="hidden units (default 64)")
    parser.add_argument("--epochs", type=int_at_least(1), default=4, help="passes over the data")
    parser.add_argument(
        "--alphas",
        type=non_negative_float,
        nargs="+",
        default=[1.0, 2.0, 3.0],
        help="tempers whose placement is reported",
    )
    parser.add_argument(
        "--reveals",
        type=float,
        nargs="*",
        default=[],
        help="also report the placement of oracle_champion[reveal=F]'s cheating worlds, for each F",
    )
    parser.add_argument(
        "--particles",
        type=int_at_least(1),
        nargs="*",
        default=[],
        help="also report the placement of particle filters of these many worlds (champion[particles=N])",
    )
    parser.add_argument(
        "--history",
        type=int_at_least(1),
        nargs="*",
        default=[],
        help="also report the placement of history samplers walking these many proposals a decision "
        "(champion[history=N])",
    )
    parser.add_argument(
        "--history-chains",
        type=int_at_least(1),
        default=1,
        help="split each --history sampler's proposals between this many independent walks "
        "(default 1: one walk; agents.mexican_train.history.HistoryChains)",
    )
    parser.add_argument(
        "--history-from-truth",
        action="store_true",
        help="also walk each --history sampler from the true history (a check that it samples the posterior)",
    )
    parser.add_argument("--out", type=Path, required=True, help="the model file (.npz)")
    args = parser.parse_args(argv)
    if not all(0.0 <= f <= 1.0 for f in args.reveals):
        parser.error(f"--reveals are probabilities in [0, 1], got {args.reveals}")
    if args.history_from_truth and args.history_chains > 1:
        parser.error("--history-from-truth plants the truth in one walk: it needs --history-chains 1")
    if any(steps < args.history_chains for steps in args.history):
        parser.error(f"each --history needs at least --history-chains ({args.history_chains}) proposals")
    if args.out.suffix != ".npz":
        parser.error(f"--out must end in .npz, got {args.out}")
    refuse_output(parser, "--out", args.out)
    players_or_exit(parser, args.players)
    players = args.players
    max_pips = mtrain_env.raw_env(num_players=players).config.max_pips
    train_seeds = range(args.seed, args.seed + args.games)
    eval_seeds = range(args.seed + args.games, args.seed + args.games + args.eval_games)
    x, allowed, y = dataset(players, train_seeds, "training games")
    print(f"{len(y)} hidden tiles of {args.games} planner games (seeds {train_seeds[0]}..{train_seeds[-1]})")
    model = fit(x, allowed, y, players, max_pips, args.hidden, args.epochs, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(args.out) as f:
        model.save(f)
    ex, eallowed, ey = dataset(players, eval_seeds, "held-out games")
    model_loss, prior_loss = log_losses(model, ex, eallowed, ey)
    print(f"held out ({args.eval_games} games, seeds {eval_seeds[0]}..{eval_seeds[-1]}, {len(ey)} tiles):")
    print(f"  per-tile log-loss: model {model_loss:.4f}, counts-only prior {prior_loss:.4f} nats")
    config = mtrain_env.raw_env(num_players=players).config
    models: dict[str, LearnedModel | OpponentModel] = {
        f"learned alpha={a}": LearnedModel(model, a) for a in args.alphas
    }
    models["chain-keeping beta=3"] = OpponentModel(config, 3.0)
    placement_seeds = eval_seeds[: min(20, len(eval_seeds))]
    shares = placement(models, players, placement_seeds, reveals=args.reveals)
    print("  hidden tiles in the right hand (seat 0's decisions):")
    print(f"    {'worlds':<24}{'all':>8}{'fitting an end':>16}{'worlds agree':>14}")
    for name, share in shares.items():
        print(share.line(name))
    for count in args.particles:
        factory = filter_factory(count, DEFAULT_EPS)
        print(
            tracker_placement(players, placement_seeds, factory, "particle filter").line(
                f"particle filter, {count}"
            )
        )
    chains = args.history_chains
    for steps in args.history:
        factory = history_factory(steps, DEFAULT_THIN, DEFAULT_EPS, chains)
        label = f"history sampler, {steps}" if chains == 1 else f"{chains} walks, {steps}"
        print(tracker_placement(players, placement_seeds, factory, "history sampler").line(label))
        if args.history_from_truth:
            walk = tracker_placement(players, placement_seeds, factory, "history from the truth", True)
            print(walk.line("  from the truth (cheat)"))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m training.hand_model"))
