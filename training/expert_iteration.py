"""``python -m training.expert_iteration``: train the ``ismcts_puct``'s prior by expert iteration.

Each iteration:

1. **label** — ``--games`` games (one round each) are played with the current searcher in
   every seat: iteration 0 is plain ``ismcts`` (no network yet), later ones the
   ``ismcts_puct`` with the last network as its PUCT prior (both with ``--c`` and
   ``--opponents`` when given, else each searcher's own defaults: ``ismcts``'s c=10 and
   opponents=tree, the ismcts_puct's 30 and chain). At every decision with a choice
   the seat's observation and action mask are kept with the search's root visit
   distribution (the label: where the search ends up spending its iterations);
2. **train** — the self-play network (:mod:`agents.mexican_train.tilenet`, the policy head)
   is fitted to every label so far by masked cross-entropy, games of the last 10% held out
   (accuracy: the network's argmax equals the search's most-visited move);
3. **save** — ``OUT/iter_K.npz`` (a self-play policy file: the ``ismcts_puct``'s ``path=`` and
   the ``ismcts_puct_policy`` distilled player read it), ``OUT/labels_K.npz``, and a line of
   ``OUT/metrics.jsonl``.

A rerun resumes after the last saved iteration (``--iterations`` may grow); the settings
that make the iterations (every other option) are kept in ``OUT/settings.json`` and a rerun
with other ones is refused in one line naming them, exit code 2. One run writes ``OUT`` at a
time. Deterministic given ``--seed`` and the budget in ``--sims`` (torch runs on one thread).
The options are checked before torch is imported (the fitting lives in
:mod:`training.policy_fit`).

    python -m training.expert_iteration --out runs/exit --iterations 3 --games 150 --sims 200
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from agents.mexican_train.base import Decision
from agents.mexican_train.ismcts import OPPONENTS, ISMCTSAgent
from mtrain_env.cli import int_at_least, players_or_exit, positive_float, refuse_output
from mtrain_env.mexican_train import GameConfig
from mtrain_env.mexican_train import env as make_env
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.files import atomic_write
from mtrain_env.tilegame.interrupts import run_main
from training.choices import play_choices
from training.out_lock import run_locked

__all__ = ["label_games", "main", "parse_args"]

PROG = "expert_iteration"
#: the arrays of a labels file
KEYS = ("obs", "mask", "target", "game")
#: the options that make the iterations (a rerun must match them; ``--iterations`` may grow)
SETTINGS = ("games", "sims", "players", "epochs", "lr", "batch", "hidden", "seed", "c", "opponents", "c_puct")
SETTINGS_FILE = "settings.json"


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


def _merge(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([p[k] for p in parts]) for k in KEYS}


def parse_args(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, GameConfig]:
    """The options and the game, checked (exit code 2 naming the option) before any import
    of torch and before anything is written."""
    parser = OneLineErrorParser(prog=PROG, description=__doc__.splitlines()[0])
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
    parser.add_argument(
        "--c",
        type=positive_float,
        default=None,
        help="the searches' UCB constant (default: each searcher's own)",
    )
    parser.add_argument(
        "--opponents",
        choices=OPPONENTS,
        default=None,
        help="as ismcts's opponents= (default: each searcher's own)",
    )
    parser.add_argument("--c-puct", type=positive_float, default=40.0, help="the ismcts_puct's prior weight")
    args = parser.parse_args(argv)
    refuse_output(parser, "--out", args.out, "directory")
    return args, players_or_exit(parser, args.players)


def _fail(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return 2


def _settings_problem(args: argparse.Namespace) -> str | None:
    """Why ``--out`` cannot take ``args``' iterations: it holds iterations made with other
    settings, or iterations without their settings (made before they were recorded)."""
    out = Path(args.out)
    path = out / SETTINGS_FILE
    if not path.is_file():
        if any(out.glob("iter_*.npz")) or any(out.glob("labels_*.npz")):
            return (
                f"{out} holds iterations but no {SETTINGS_FILE} (made before settings were recorded), "
                "so this command line cannot be checked against them: use a new --out"
            )
        return None
    try:
        saved = json_text.read_object(path)
    except (OSError, ValueError) as err:
        return f"{path}: not the settings of an expert_iteration run ({err})"
    changed = [
        f"--{k.replace('_', '-')} {saved.get(k)!r} -> {getattr(args, k)!r}"
        for k in SETTINGS
        if saved.get(k) != getattr(args, k)
    ]
    if changed:
        return f"{out} holds iterations made with other settings: {', '.join(changed)} (or use a new --out)"
    return None


def _checked_settings(args: argparse.Namespace) -> dict[str, Any] | None:
    """``args``' settings, or ``None`` after the one line of :func:`_settings_problem`."""
    problem = _settings_problem(args)
    if problem is not None:
        _fail(f"--out: {problem}")
        return None
    return {k: getattr(args, k) for k in SETTINGS}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the iterations (see the module docstring); the exit status."""
    args, config = parse_args(argv)
    return run_locked(
        args.out,
        lambda: _checked_settings(args),
        lambda settings: _iterate(args, config, settings),
        lambda text: _fail(f"--out: {text}"),
    )


def _iterate(args: argparse.Namespace, config: GameConfig, settings: dict[str, Any]) -> int:
    """Record ``settings`` and run (or resume) the iterations; the caller holds ``--out``'s lock."""
    import torch as th

    from agents.mexican_train.puct import PUCTAgent
    from agents.mexican_train.tilenet import NetSpec, build_net, read_selfplay_policy, save_selfplay_policy
    from training.policy_fit import train_policy

    th.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / SETTINGS_FILE, json.dumps(settings, indent=1) + "\n")
    net: Any = build_net(NetSpec.make("tile", config, hidden=args.hidden), seed=args.seed)
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
        # --c and --opponents when given (they were ignored), else each searcher's defaults
        given = {
            key: value for key, value in (("c", args.c), ("opponents", args.opponents)) if value is not None
        }
        searcher: ISMCTSAgent = (
            ISMCTSAgent(seed=args.seed, sims=args.sims, **given)
            if k == 0
            else PUCTAgent(
                seed=args.seed, sims=args.sims, c_puct=args.c_puct, path=out / f"iter_{k - 1}.npz", **given
            )
        )
        seed = args.seed * 1_000_003 + k * args.games  # fresh deals every iteration
        labels = label_games(searcher, args.games, seed, config.num_players)
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
    sys.exit(run_main(main, "python -m training.expert_iteration"))
