"""``python -m training.expert_iteration``: train the ``ismcts_puct``'s prior by expert iteration.

Each iteration:

1. **label** — ``--games`` games (one round each) are played with the current searcher in
   every seat: iteration 0 is plain ``ismcts`` (no network yet), later ones the
   ``ismcts_puct`` with the last network as its PUCT prior (both with ``--c`` and
   ``--opponents``, the ismcts_puct's defaults). At every decision with a choice
   the seat's observation and action mask are kept with the search's root visit
   distribution (the label: where the search ends up spending its iterations);
2. **train** — the self-play network (:mod:`agents.mexican_train.tilenet`, the policy head)
   is fitted to every label so far by masked cross-entropy, games of the last 10% held out
   (accuracy: the network's argmax equals the search's most-visited move);
3. **save** — ``OUT/iter_K.npz`` (a self-play policy file: the ``ismcts_puct``'s ``path=`` and
   the ``ismcts_puct_policy`` distilled player read it), ``OUT/labels_K.npz``, and a line of
   ``OUT/metrics.jsonl``.

A rerun resumes after the last saved iteration. Deterministic given ``--seed`` and the
budget in ``--sims`` (torch runs on one thread).

    python -m training.expert_iteration --out runs/exit --iterations 3 --games 150 --sims 200
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from tqdm import tqdm

from agents.mexican_train.base import Decision
from agents.mexican_train.ismcts import OPPONENTS, ISMCTSAgent
from agents.mexican_train.puct import PUCTAgent
from agents.mexican_train.tilenet import (
    NetSpec,
    TileNet,
    build_net,
    read_selfplay_policy,
    save_selfplay_policy,
)
from mtrain_env.cli import int_at_least, output_problem, positive_float
from mtrain_env.mexican_train import GameConfig
from mtrain_env.mexican_train import env as make_env
from training.choices import play_choices

__all__ = ["fit_minibatches", "held_out", "label_games", "train_policy"]

#: the arrays of a labels file
KEYS = ("obs", "mask", "target", "game")


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run the block on one torch thread (restored after): small passes on a busy machine
    are many times slower on torch's thread pool than on one thread."""
    threads = th.get_num_threads()
    th.set_num_threads(1)
    try:
        yield
    finally:
        th.set_num_threads(threads)


def label_games(
    searcher: ISMCTSAgent, games: int, seed: int, players: int, progress: bool = True
) -> dict[str, np.ndarray]:
    """Play ``games`` one-round games with ``searcher`` in every seat (deals ``seed + g``);
    the observation, mask and root visit distribution of every decision with a choice."""
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    game_ids: list[int] = []
    e = make_env(num_players=players)
    for g in tqdm(range(games), desc="label", unit="game", disable=not progress):
        searcher.reset(seed + g)

        def label(decision: Decision, deal: int = seed + g) -> int:
            action = searcher.act(decision)
            mask = np.asarray(decision.action_mask, bool)
            target = np.zeros(mask.shape[0], np.float32)
            for a, (visits, _value) in searcher.last_visits.items():
                target[a] = visits
            target /= target.sum()
            obs.append(np.asarray(decision.observation, np.float32).copy())
            masks.append(mask.copy())
            targets.append(target)
            game_ids.append(deal)
            return action

        play_choices(e, seed + g, label)
    return {
        "obs": np.stack(obs),
        "mask": np.stack(masks),
        "target": np.stack(targets),
        "game": np.asarray(game_ids, np.int64),
    }


def _loss(net: Any, obs: th.Tensor, mask: th.Tensor, target: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
    """Masked cross-entropy to the visit distribution, and the top-1 agreement."""
    logits, _value = net(obs, mask)
    loss = -(target * th.log_softmax(logits, dim=1)).sum(1).mean()
    agree = (logits.argmax(1) == target.argmax(1)).float().mean()
    return loss, agree


def train_policy(
    net: Any, data: dict[str, np.ndarray], epochs: int, lr: float, batch: int, seed: int
) -> dict[str, float]:
    """Fit ``net``'s policy to ``data``'s labels (in place); games of the last 10% held out.

    Returns the last epoch's training cross-entropy, the labels' own entropy (its floor:
    their difference is the KL divergence), and the held-out cross-entropy and top-1
    agreement with the search's most-visited move, after fitting and (``before_``) before."""
    with one_torch_thread():
        return _fit(net, data, epochs, lr, batch, seed)


def held_out(games: np.ndarray) -> np.ndarray:
    """Mask of the positions of the last 10% of the games (at least one): the held-out set."""
    ids = np.unique(games)
    return np.isin(games, ids[len(ids) - max(1, len(ids) // 10) :])


def fit_minibatches(
    net: Any,
    tensors: dict[str, th.Tensor],
    train_idx: np.ndarray,
    loss_fn: Callable[..., th.Tensor],
    keys: Sequence[str],
    epochs: int,
    lr: float,
    batch: int,
    seed: int,
) -> float:
    """Adam over shuffled minibatches of ``train_idx`` (``loss_fn`` of the ``keys`` tensors),
    ``net`` left in eval mode; returns the last epoch's mean loss."""
    rng = np.random.default_rng(seed)
    net.train()
    for param in net.parameters():
        param.requires_grad_(True)
    opt = th.optim.Adam(net.parameters(), lr=lr)
    train_loss = 0.0
    for _epoch in range(epochs):
        order = rng.permutation(train_idx)
        total = 0.0
        for start in range(0, len(order), batch):
            idx = th.as_tensor(order[start : start + batch])
            loss = loss_fn(*(tensors[k][idx] for k in keys))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        train_loss = total / max(1, len(order))
    net.eval()
    return train_loss


def _fit(
    net: Any, data: dict[str, np.ndarray], epochs: int, lr: float, batch: int, seed: int
) -> dict[str, float]:
    held = held_out(data["game"])
    tensors = {k: th.as_tensor(data[k]) for k in ("obs", "mask", "target")}
    train_idx = np.flatnonzero(~held)
    test_idx = th.as_tensor(np.flatnonzero(held))
    with th.no_grad():  # the network as it comes (fresh or --init): what fitting changed
        before_loss, before_agree = _loss(net, *(tensors[k][test_idx] for k in ("obs", "mask", "target")))
    train_loss = fit_minibatches(
        net,
        tensors,
        train_idx,
        lambda *b: _loss(net, *b)[0],
        ("obs", "mask", "target"),
        epochs,
        lr,
        batch,
        seed,
    )
    t = data["target"][train_idx]
    entropy = max(0.0, float(-(t * np.log(np.where(t > 0, t, 1.0))).sum(1).mean())) if len(t) else 0.0
    with th.no_grad():
        test_loss, agree = _loss(net, *(tensors[k][test_idx] for k in ("obs", "mask", "target")))
    return {
        "train_positions": len(train_idx),
        "test_positions": len(test_idx),
        "train_xent": round(train_loss, 4),
        "label_entropy": round(entropy, 4),  #: the cross-entropy's floor (xent - entropy = KL)
        "test_xent": round(float(test_loss), 4),
        "test_top1": round(float(agree), 4),
        "before_xent": round(float(before_loss), 4),  #: held out, before fitting
        "before_top1": round(float(before_agree), 4),
    }


def _merge(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([p[k] for p in parts]) for k in KEYS}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="expert_iteration", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="directory of the labels, networks and metrics")
    parser.add_argument("--iterations", type=int_at_least(1), default=3)
    parser.add_argument("--games", type=int_at_least(2), default=150, help="labelled games per iteration")
    parser.add_argument("--sims", type=int_at_least(1), default=200, help="search iterations per label")
    parser.add_argument("--players", type=int_at_least(2), default=4)
    parser.add_argument("--epochs", type=int_at_least(1), default=6)
    parser.add_argument("--lr", type=positive_float, default=1e-3)
    parser.add_argument("--batch", type=int_at_least(1), default=256)
    parser.add_argument("--hidden", type=int_at_least(1), default=64)
    parser.add_argument("--seed", type=int_at_least(0), default=7)
    parser.add_argument("--c", type=positive_float, default=30.0, help="the searches' UCB constant")
    parser.add_argument("--opponents", choices=OPPONENTS, default="chain", help="as ismcts's opponents=")
    parser.add_argument("--c-puct", type=positive_float, default=40.0, help="the ismcts_puct's prior weight")
    args = parser.parse_args(argv)
    problem = output_problem(args.out, "directory")
    if problem is not None:
        parser.error(f"--out: {problem}")
    th.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = GameConfig.make(num_players=args.players)
    net: TileNet | Any = build_net(NetSpec.make("tile", config, hidden=args.hidden), seed=args.seed)
    parts: list[dict[str, np.ndarray]] = []
    for k in range(args.iterations):
        policy_path = out / f"iter_{k}.npz"
        labels_path = out / f"labels_{k}.npz"
        if policy_path.exists() and labels_path.exists():  # resume
            with np.load(labels_path) as f:
                parts.append({key: f[key] for key in KEYS})
            net = read_selfplay_policy(policy_path)
            print(f"iteration {k}: resumed from {policy_path}")
            continue
        searcher: ISMCTSAgent = (
            ISMCTSAgent(seed=args.seed, sims=args.sims)
            if k == 0
            else PUCTAgent(seed=args.seed, sims=args.sims, c_puct=args.c_puct, path=out / f"iter_{k - 1}.npz")
        )
        seed = args.seed * 1_000_003 + k * args.games  # fresh deals every iteration
        labels = label_games(searcher, args.games, seed, args.players)
        np.savez_compressed(
            labels_path, obs=labels["obs"], mask=labels["mask"], target=labels["target"], game=labels["game"]
        )
        parts.append(labels)
        metrics = train_policy(net, _merge(parts), args.epochs, args.lr, args.batch, args.seed + k)
        save_selfplay_policy(net, policy_path)
        row: dict[str, Any] = {"iteration": k, "searcher": searcher.name, "sims": args.sims, **metrics}
        with open(out / "metrics.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
