"""``python -m training.distill_mc``: distil the ``mc`` search into a self-play network.

Expert iteration with a fixed expert: ``mc`` (determinized search on the compiled
rollouts) labels positions, and a self-play policy network (``mtrain selfplay``'s tile
net, fresh or from ``--init``) is fitted to the labels. The ``mc_student`` agent plays the
result: the planner's move unless the network is confident ``mc`` would play another (no
search at play time, numpy, ~0.1-0.3 ms a decision). Imitating ``mc`` outright, the
network's argmax alone, plays worse than the planner (README, "Distilling mc").

Two steps, each resumable:

``label`` — ``--games`` one-round games in shards of ``--shard`` games (deals
``seed + g``), spread over ``--workers`` processes. At every decision with a choice the
teacher (``--teacher``: ``mc`` by default, or ``champion``, the search whose prior and
rollouts are a network, for expert iteration proper; at ``--sims`` rollouts) labels the
position: ``--target move`` (default) with its move, ``--target values`` with every legal
move's mean result minus the planner move's over the same worlds
(``MCAgent.candidate_results``). ``--teacher oracle[rollout=policy]`` labels from the TRUE
state instead (perfect-information distillation, as Suphx's oracle guiding and PerfectDou's
perfect-training-imperfect-execution): each move's value is its playout by the network's
rollouts on the real hands and draws, one sample of the hidden state drawn from the true
posterior (the deal itself), so over many positions the fitted policy follows each move's
mean over what the seat cannot see. Only the labels read the hidden state; the network is
fitted to the seat's observation and plays fair. The move actually played is the teacher's with probability
``--teacher-share`` and the student's (``--student``, an agent spec such as ``planner`` or
``ppo[path=P]``) otherwise, so the positions are those the student reaches (DAgger's mixture;
without ``--student`` the teacher plays every move). ``--opponents planner`` labels one seat
a game (seat ``g mod players``) and has ``planner`` play the others, so the positions are
those of the "X + (n - 1) x planner" lineup (labels for a network that answers that lineup).
Each position also keeps the planner's move (``prior``). A shard is written atomically as
``OUT/labels_NNNNN.npz``; a rerun skips the shards on disk and refuses other settings
(``OUT/label.json``). A rerun with a larger ``--games`` relabels the short last shard of the
smaller one (the set is then the one the larger ``--games`` labels from scratch); shards of
more games than ``--games`` holds are refused. One labelling run writes ``OUT`` at a time.
The same ``--seed`` and settings give the same shards on any number of workers.

``train`` — fits the network to every shard (``--shards N``: the first N), the last 10% of
the games held out:
``--loss xent`` (default) by masked cross-entropy to the teacher's move (metrics: top-1
agreement, and per ``mc_student`` threshold its agreement with the teacher, how often it
overrules the planner and how often rightly); ``--loss advantage`` by squared error to the
value labels (metrics per ``mc_student`` margin); ``--loss improve`` (value labels, ``--init``)
by cross-entropy to ``p0 * exp(values / --temperature)`` renormalised over the legal moves,
``p0`` the starting network's policy: the closed-form policy that maximises the labelled
values minus ``temperature`` times the KL divergence from ``p0`` (MPO's improvement step,
Abdolmaleki et al. 2018), so every position teaches how much better or worse each move
measured, not only which won, and a small difference moves the policy a little.
``--anchor b`` (xent, ``0 <= b < 1``) fits
``(one-hot + b * p0) / (1 + b)`` instead of the one-hot move, ``p0`` the starting network's own
policy: the gradient of cross-entropy plus ``b`` times the KL divergence from ``p0``, so the
fit learns the teacher's overrides without drifting elsewhere (the label stays the argmax).
Writes ``OUT/policy.npz`` (or ``--policy-out``, so one set of labels serves several fits)
and a line of ``OUT/metrics.jsonl`` naming the policy file.

    python -m training.distill_mc label --out runs/distill --games 3325 --student planner
    python -m training.distill_mc train --out runs/distill --epochs 8 --lr 1e-3
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from agents.mexican_train.base import Decision, decision_for
from agents.mexican_train.mc import MCAgent
from agents.mexican_train.oracle import OracleAgent
from agents.mexican_train.selfplay_file import read_selfplay_file
from agents.registry import make_agent
from agents.tournament.harness import AgentSpec
from mtrain_env.cli import int_at_least, output_problem, positive_float
from mtrain_env.mexican_train import GameConfig
from mtrain_env.mexican_train import env as make_env
from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.files import atomic_write, atomic_writer, os_error_text
from mtrain_env.tilegame.interrupts import run_main, workers_ignore_interrupts
from training.choices import play_choices
from training.out_lock import run_locked

__all__ = ["LabelJob", "agent_from_spec", "label_shard", "load_labels", "shard_paths"]

#: the arrays of every labels shard (``target``: the teacher's move as a one-hot row;
#: ``prior``: the planner's move); ``--target values`` shards add ``values``: each legal
#: move's mean result minus the planner move's, over the same worlds (pips a round)
KEYS = ("obs", "mask", "target", "prior", "game")


@dataclass(frozen=True)
class LabelJob:
    """One shard: games ``first .. first + games - 1`` (deal seeds ``seed + g``)."""

    out: str
    shard: int
    first: int
    games: int
    seed: int
    players: int
    sims: int
    student: str | None
    teacher_share: float
    target: str = "move"
    teacher: str = "mc"
    #: who plays the unlabelled seats: none (every seat is labelled) or planner
    opponents: str = "none"

    @property
    def path(self) -> Path:
        return Path(self.out) / f"labels_{self.shard:05d}.npz"


def label_shard(job: LabelJob) -> int:
    """Play and label ``job``'s games and write its shard (atomically); returns the labels written."""
    teacher = make_teacher(job.teacher, job.sims)
    student = None if job.student is None else agent_from_spec(job.student)
    planner = make_agent("planner")
    rng = np.random.default_rng([job.seed, job.shard, 11])
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    targets: list[int] = []
    priors: list[int] = []
    values: list[np.ndarray] = []
    game_ids: list[int] = []
    e = make_env(num_players=job.players)
    for g in range(job.first, job.first + job.games):
        deal = job.seed + g
        teacher.reset(deal)
        if student is not None:
            student.reset(deal)

        labelled = g % job.players if job.opponents == "planner" else None

        def label_and_play(decision: Decision, deal: int = deal, labelled: int | None = labelled) -> int:
            # the oracle teacher's decision carries the true state: everyone else gets the seat's view
            view = decision if type(decision) is Decision else decision_for(e, decision.agent_id)
            legal = view.legal_actions
            prior = planner.act(view)
            if labelled is not None and view.seat != labelled:
                return int(prior)  # an opponent seat of the lineup: not labelled
            if job.target == "move":
                label = teacher.act(decision)
            else:  # every legal move on the same worlds: advantages over the planner's move
                means = teacher_values(teacher, decision, job.sims)
                label = int(legal[int(np.argmax(means))])
                row = np.zeros(len(view.action_mask), np.float32)
                row[np.asarray(legal)] = means - means[list(legal).index(prior)]
                values.append(row)
            obs.append(np.asarray(view.observation, np.float32).copy())
            masks.append(np.asarray(view.action_mask, bool).copy())
            targets.append(label)
            priors.append(prior)
            game_ids.append(deal)
            if student is not None and rng.random() >= job.teacher_share:
                return int(student.act(view))
            return label

        play_choices(e, deal, label_and_play, cheat=getattr(teacher, "cheats", False))
    mask = np.stack(masks)
    target = np.zeros(mask.shape, np.float32)
    target[np.arange(len(targets)), targets] = 1.0
    arrays = {
        "obs": np.stack(obs),
        "mask": mask,
        "target": target,
        "prior": np.asarray(priors, np.int64),
        "game": np.asarray(game_ids, np.int64),
    }
    if values:
        arrays["values"] = np.stack(values)
    arrays["games"] = np.asarray(job.games, np.int64)  # games with no labelled decision count too
    with atomic_writer(job.path) as f:
        np.savez_compressed(f, **arrays)  # type: ignore[arg-type]
    return len(targets)


def shard_paths(out: str | Path) -> list[Path]:
    """The shards in ``out``, in shard order; ``ValueError`` when there is none."""
    paths = sorted(Path(out).glob("labels_[0-9][0-9][0-9][0-9][0-9].npz"))
    if not paths:
        raise ValueError(f"{out}: no labels_NNNNN.npz shards (run the label step first)")
    return paths


def load_labels(out: str | Path, shards: int | None = None) -> dict[str, np.ndarray]:
    """The shards of ``out`` (the first ``shards`` of them, default all), concatenated in shard order."""
    parts = []
    for path in shard_paths(out)[:shards]:
        with np.load(path) as f:
            parts.append({k: f[k] for k in (*KEYS, "values") if k in f.files})
    keys = [k for k in parts[0] if all(k in p for p in parts)]
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


#: the searches ``--teacher`` may name: ``mc`` and ``champion`` (each an :class:`MCAgent`:
#: ``candidate_results``) and the CHEATING ``oracle`` (its values on the true state)
TEACHERS = ("mc", "champion", "oracle")


def make_teacher(spec: str, sims: int) -> MCAgent | OracleAgent:
    """The labelling search of ``spec`` (``mc``, ``champion`` or ``oracle``, optionally with
    params such as ``champion[path=P]`` or ``oracle[rollout=policy]``) at ``sims`` rollouts a
    decision (the oracle's search on the true state needs no budget); ``ValueError`` for any
    other agent or a ``sims``/``ms`` in the spec (the budget is ``--sims``: labels are
    reproducible)."""
    parsed = AgentSpec.parse(spec)
    if parsed.name not in TEACHERS:
        raise ValueError(f"--teacher must be one of {', '.join(TEACHERS)} (with params), got {spec!r}")
    params = dict(parsed.params)
    for knob in ("sims", "ms", "rollouts"):
        if knob in params:
            raise ValueError(f"--teacher {spec}: give the budget with --sims, not {knob}=")
    if parsed.name == "oracle":
        oracle = make_agent("oracle", **params)
        assert isinstance(oracle, OracleAgent)
        return oracle
    if parsed.name == "mc":
        params.setdefault("engine", "compiled")
    agent = make_agent(parsed.name, sims=sims, **params)
    assert isinstance(agent, MCAgent)
    return agent


def teacher_values(teacher: MCAgent | OracleAgent, decision: Decision, sims: int) -> np.ndarray:
    """Every legal move's result for the seat, in the order of ``decision.legal_actions``:
    ``mc``/``champion``'s means over the same worlds (``sims`` rollouts shared out), the
    oracle's playouts of the true state (one sample of the hidden hands, the real one)."""
    if isinstance(teacher, OracleAgent):
        teacher.act(decision)
        return np.array([teacher.last_values[a] for a in decision.legal_actions])
    return teacher.candidate_results(decision, max(1, sims // len(decision.legal_actions))).mean(0)


def agent_from_spec(spec: str) -> Any:
    """The agent of a spec such as ``planner`` or ``ppo[path=P]``."""
    parsed = AgentSpec.parse(spec)
    return make_agent(parsed.name, **dict(parsed.params))


#: thresholds of ``mc_student`` whose held-out agreement with the teacher ``train`` reports
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def network_policy(net: Any, obs: np.ndarray, mask: np.ndarray, batch: int = 4096) -> np.ndarray:
    """The self-play network's masked policy (softmax of its scores) on each position, in
    batches of ``batch``, without gradients."""
    import torch as th

    rows = []
    with th.no_grad():
        for start in range(0, len(obs), batch):
            part = slice(start, start + batch)
            logits, _value = net(th.as_tensor(obs[part]), th.as_tensor(mask[part]))
            rows.append(th.softmax(logits, dim=1).numpy())
    return np.concatenate(rows) if rows else np.zeros(mask.shape, np.float32)


def student_agreement(net: Any, data: dict[str, np.ndarray]) -> dict[str, float]:
    """On the held-out positions: how often the planner, and ``mc_student`` at each of
    :data:`THRESHOLDS`, plays the teacher's move, how often the student deviates from the
    planner and how often such a deviation is the teacher's move."""

    from training.policy_fit import held_out

    held = held_out(data["game"])
    teacher = data["target"][held].argmax(1)
    prior = data["prior"][held]
    p = network_policy(net, data["obs"][held], data["mask"][held])
    best = p.argmax(1)
    confident = p[np.arange(len(best)), best]
    out = {"planner_agrees": round(float((prior == teacher).mean()), 4)}
    for t in THRESHOLDS:
        move = np.where((best != prior) & (confident >= t), best, prior)
        out[f"student_agrees@{t}"] = round(float((move == teacher).mean()), 4)
        deviates = move != prior
        out[f"student_deviates@{t}"] = round(float(deviates.mean()), 4)
        #: of its deviations from the planner, the share that are the teacher's move
        out[f"deviation_precision@{t}"] = (
            round(float((move == teacher)[deviates].mean()), 4) if deviates.any() else 0.0
        )
    return out


def _advantage_loss(net: Any, obs: Any, mask: Any, prior: Any, values: Any) -> Any:
    """Squared error of the network's scores, relative to the planner move's, against the
    labelled advantages, over the legal moves."""
    import torch as th

    scores, _value = net(obs, mask)
    rows = th.arange(len(prior))
    pred = th.where(mask, scores - scores[rows, prior].unsqueeze(1), th.zeros_like(scores))
    return (((pred - values) ** 2) * mask).sum() / mask.sum()


def advantage_moves(scores: np.ndarray, mask: np.ndarray, prior: np.ndarray, margin: float) -> np.ndarray:
    """``mc_student``'s advantage rule on a batch: the best-scored legal move where it beats
    the planner's move by more than ``margin``, else the planner's move."""
    masked = np.where(mask, scores, -np.inf)
    best = masked.argmax(1)
    gain = masked[np.arange(len(best)), best] - masked[np.arange(len(best)), prior]
    return np.where(gain > margin, best, prior)


def fit_advantages(
    net: Any, data: dict[str, np.ndarray], epochs: int, lr: float, batch: int, seed: int
) -> dict[str, float]:
    """Fit ``net``'s scores (relative to the planner move's) to the labelled advantages (in
    place, one torch thread, games of the last 10% held out). Returns the held-out squared
    error, and per margin of :data:`MARGINS` how often the advantage rule deviates from the
    planner and the labels' mean advantage of the moves it plays (pips a round a decision,
    an estimate of its gain over the planner that the labels' noise makes optimistic)."""
    import torch as th

    from training.policy_fit import fit_minibatches, held_out, one_torch_thread

    held = held_out(data["game"])
    tensors = {
        "obs": th.as_tensor(data["obs"]),
        "mask": th.as_tensor(data["mask"]),
        "prior": th.as_tensor(data["prior"]),
        "values": th.as_tensor(data["values"]),
    }
    train_idx = np.flatnonzero(~held)
    with one_torch_thread():
        train_loss = fit_minibatches(
            net,
            tensors,
            train_idx,
            lambda *b: _advantage_loss(net, *b),
            ("obs", "mask", "prior", "values"),
            epochs,
            lr,
            batch,
            seed,
        )
        test = th.as_tensor(np.flatnonzero(held))
        with th.no_grad():
            test_loss = _advantage_loss(net, *(tensors[k][test] for k in ("obs", "mask", "prior", "values")))
            scores, _value = net(tensors["obs"][test], tensors["mask"][test])
    out: dict[str, float] = {
        "train_positions": len(train_idx),
        "test_positions": len(test),
        "train_mse": round(train_loss, 4),
        "test_mse": round(float(test_loss), 4),
    }
    mask, prior, values = data["mask"][held], data["prior"][held], data["values"][held]
    best_label = np.where(mask, values, -np.inf).max(1)
    out["label_best_gain"] = round(float(best_label.mean()), 4)
    for m in MARGINS:
        move = advantage_moves(scores.numpy(), mask, prior, m)
        out[f"deviates@{m}"] = round(float((move != prior).mean()), 4)
        out[f"label_gain@{m}"] = round(float(values[np.arange(len(move)), move].mean()), 4)
    return out


def _check_student(spec: str, players: int) -> None:
    """``ValueError``/``OSError`` unless ``spec`` is an agent that can play these games:
    it is asked for one move (a policy file is read, its table size checked)."""
    e = make_env(num_players=players)
    e.reset(seed=0)
    decision = decision_for(e, e.agent_selection)
    if agent_from_spec(spec).act(decision) not in decision.legal_actions:
        raise ValueError(f"--student {spec}: plays an illegal move")


def _check_shard(path: Path) -> None:
    """``ValueError`` naming ``path`` unless it is an ``.npz`` archive holding the label arrays."""
    try:
        with np.load(path) as f:
            missing = [k for k in KEYS if k not in f.files]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else "not an .npz archive"
        raise ValueError(f"{path}: not a labels shard ({reason})") from None
    if missing:
        raise ValueError(f"{path}: not a labels shard (no {', '.join(missing)})")


def _labels_config(out: str | Path) -> GameConfig:
    """The (4-player or other) double-12 game whose observations the shards hold."""
    with np.load(shard_paths(out)[0]) as f:
        size = f["obs"].shape[1]
    for players in range(2, 9):
        config = GameConfig.make(num_players=players)
        e = make_env(num_players=players)
        e.reset(seed=0)
        if len(decision_for(e, e.agent_selection).observation) == size:
            return config
    raise ValueError(f"{out}: observations of size {size} fit no double-12 table of 2-8 players")


def _check_policy(path: str, players: int | None) -> None:
    """``ValueError`` unless ``path`` is a self-play policy file (for ``players`` seats)."""
    spec, _arrays = read_selfplay_file(path)
    seats = dict(spec.game)["num_players"]
    if players is not None and seats != players:
        raise ValueError(f"{path}: a policy for {seats} players, the games have {players}")


#: what a position is labelled with (``label --target``)
TARGETS = ("move", "values")
#: what the network is fitted to (``train --loss``)
LOSSES = ("xent", "advantage", "improve")
#: ``train --loss improve``'s temperature unless ``--temperature`` says otherwise (pips a round)
DEFAULT_TEMPERATURE = 1.0
#: margins (pips a round) of ``mc_student``'s advantage rule that ``train`` reports on
MARGINS = (0.0, 0.5, 1.0, 2.0, 4.0)

#: the label settings a directory's shards were made with (a rerun must match them)
SETTINGS = ("shard", "sims", "players", "seed", "student", "teacher_share", "target", "teacher", "opponents")
#: settings added later, and their value in directories labelled before they existed
SETTING_DEFAULTS = {"teacher": "mc", "opponents": "none"}
#: who may play the unlabelled seats (``label --opponents``)
LABEL_OPPONENTS = ("none", "planner")


def _check_settings(args: argparse.Namespace) -> None:
    """``ValueError`` if ``--out`` holds shards labelled with other settings."""
    path = Path(args.out) / "label.json"
    if path.is_file():
        try:
            saved = json_text.read_object(path)
        except ValueError as err:
            raise ValueError(f"{path}: not the label settings of a distill_mc run ({err})") from None
        wanted = {k: getattr(args, k) for k in SETTINGS}
        changed = [
            f"--{k.replace('_', '-')} {saved.get(k)!r} -> {wanted[k]!r}"
            for k in SETTINGS
            if saved.get(k, SETTING_DEFAULTS.get(k)) != wanted[k]
        ]
        if changed:
            raise ValueError(f"{args.out} holds labels made with other settings: {', '.join(changed)}")


def shard_games(path: Path) -> int:
    """The games ``path``'s shard was labelled from (shards written before that was kept:
    its distinct deals)."""
    with np.load(path) as f:
        return int(f["games"]) if "games" in f.files else len(np.unique(f["game"]))


def _label_jobs(args: argparse.Namespace) -> list[LabelJob]:
    """The shards of ``args``' games, in order (the last one short when ``--shard`` does not
    divide ``--games``)."""
    return [
        LabelJob(
            str(Path(args.out)),
            k,
            k * args.shard,
            min(args.shard, args.games - k * args.shard),
            args.seed,
            args.players,
            args.sims,
            args.student,
            args.teacher_share,
            args.target,
            args.teacher,
            args.opponents,
        )
        for k in range(-(-args.games // args.shard))
    ]


def _to_label(args: argparse.Namespace, jobs: list[LabelJob]) -> list[LabelJob]:
    """The ``jobs`` whose shard is to be (re)labelled: those not on disk, and one holding
    fewer games than its job (the short last shard of a smaller ``--games``). A shard is a
    function of the settings, its index and its games, so the relabelled one is what this
    ``--games`` labels from scratch, and the directory then holds exactly ``--games`` games.
    ``ValueError`` for a shard with more games than its job or past the last job (``--out``
    holds a larger ``--games``): relabelling would throw labelled games away, and keeping
    them would make the set larger than the command line says."""
    out = Path(args.out)
    for path in sorted(out.glob("labels_[0-9][0-9][0-9][0-9][0-9].npz")):  # shard_paths' files
        k = int(path.stem.removeprefix("labels_"))
        _check_shard(path)
        have = shard_games(path)
        want = jobs[k].games if k < len(jobs) else 0
        if have > want:
            raise ValueError(
                f"--games {args.games}: {path} holds {have} games, its share of --games {args.games} is "
                f"{want} ({out} was labelled with more games: give that --games, or a new --out)"
            )
    return [job for job in jobs if not job.path.exists() or shard_games(job.path) < job.games]


def _label(args: argparse.Namespace, todo: list[LabelJob]) -> int:
    """Write ``label.json`` and label the shards of ``todo`` (the caller holds ``--out``'s lock)."""
    out = Path(args.out)
    atomic_write(out / "label.json", json.dumps({k: getattr(args, k) for k in SETTINGS}, indent=1) + "\n")
    jobs = _label_jobs(args)
    for job in todo:
        if job.path.exists():  # short of its games (_to_label)
            print(f"{job.path.name} holds {shard_games(job.path)} of its {job.games} games: relabelling it")
    print(f"{len(jobs) - len(todo)} of {len(jobs)} shards on disk; labelling {len(todo)}")
    bar = tqdm(total=len(todo), desc="label", unit="shard", disable=args.no_progress)
    if args.workers == 1:
        for job in todo:
            label_shard(job)
            bar.update()
    else:
        with workers_ignore_interrupts():  # quiet from their first instruction: this process stops them
            pool = multiprocessing.get_context("spawn").Pool(args.workers)
        with pool:
            for _n in pool.imap_unordered(label_shard, todo):
                bar.update()
    bar.close()
    return 0


def anchored_targets(net: Any, data: dict[str, np.ndarray], anchor: float) -> np.ndarray:
    """``(target + anchor * p0) / (1 + anchor)``, ``p0`` the network's policy on each position:
    the targets of ``train --anchor``."""
    p0 = network_policy(net, data["obs"], data["mask"])
    return ((data["target"] + anchor * p0) / (1.0 + anchor)).astype(np.float32)


def improved_targets(net: Any, data: dict[str, np.ndarray], temperature: float) -> np.ndarray:
    """``p0 * exp(values / temperature)`` over the legal moves, normalised, ``p0`` the
    network's policy on each position: the targets of ``train --loss improve`` (the policy
    maximising the labelled values minus ``temperature`` times its KL divergence from ``p0``)."""
    p0 = network_policy(net, data["obs"], data["mask"])
    mask = data["mask"]
    logits = np.where(mask, np.log(np.maximum(p0, 1e-30)) + data["values"] / temperature, -np.inf)
    logits -= logits.max(1, keepdims=True)
    weights = np.exp(logits)
    return (weights / weights.sum(1, keepdims=True)).astype(np.float32)


def _train(args: argparse.Namespace) -> int:
    import torch as th

    from agents.mexican_train.tilenet import NetSpec, build_net, read_selfplay_policy, save_selfplay_policy
    from training.policy_fit import train_policy

    th.manual_seed(args.seed)
    data = load_labels(args.out, args.shards)
    net: Any = (
        read_selfplay_policy(args.init)
        if args.init is not None
        else build_net(
            NetSpec.make("tile", _labels_config(args.out), hidden=args.hidden, pair_hidden=args.pair_hidden),
            seed=args.seed,
        )
    )
    if args.loss in ("xent", "improve"):
        if args.loss == "improve":
            data = {**data, "target": improved_targets(net, data, args.temperature)}
        elif args.anchor:
            data = {**data, "target": anchored_targets(net, data, args.anchor)}
        metrics = train_policy(net, data, args.epochs, args.lr, args.batch, args.seed)
        metrics.update(student_agreement(net, data))
    else:
        metrics = fit_advantages(net, data, args.epochs, args.lr, args.batch, args.seed)
    path = save_selfplay_policy(net, args.policy_out or Path(args.out) / "policy.npz")
    row = {
        "policy": str(path),
        "shards": args.shards,
        "positions": len(data["obs"]),
        "init": str(args.init or f"fresh tile {args.hidden}/{args.pair_hidden}"),
        "loss": args.loss,
        "anchor": args.anchor,
        **({"temperature": args.temperature} if args.loss == "improve" else {}),
        "epochs": args.epochs,
        "lr": args.lr,
        "batch": args.batch,
        **metrics,
    }
    with open(Path(args.out) / "metrics.jsonl", "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row))
    print(f"wrote {path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineErrorParser(prog="distill_mc", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    lab = sub.add_parser("label", help="label positions with mc")
    lab.add_argument("--out", required=True, help="directory of the shards")
    lab.add_argument("--games", type=int_at_least(1), default=2000)
    lab.add_argument("--shard", type=int_at_least(1), default=25, help="games a shard")
    lab.add_argument("--sims", type=int_at_least(1), default=400, help="the teacher's rollouts a decision")
    lab.add_argument(
        "--teacher",
        default="mc",
        help="the labelling search: mc (default), champion or the cheating oracle, with params "
        "(champion[path=P], oracle[rollout=policy])",
    )
    lab.add_argument("--players", type=int_at_least(2), default=4)
    lab.add_argument("--seed", type=int_at_least(0), default=500_000)
    lab.add_argument(
        "--student", default=None, help="agent spec that plays part of the moves (planner, ppo[path=P])"
    )
    lab.add_argument("--teacher-share", type=float, default=0.5, help="share of the moves the teacher plays")
    lab.add_argument(
        "--target",
        choices=TARGETS,
        default="move",
        help="move: mc's choice; values: every legal move's mean result over shared worlds",
    )
    lab.add_argument(
        "--opponents",
        choices=LABEL_OPPONENTS,
        default="none",
        help="none: every seat is labelled; planner: one seat a game, planners in the others",
    )
    lab.add_argument("--workers", type=int_at_least(1), default=1)
    lab.add_argument("--no-progress", action="store_true")
    tr = sub.add_parser("train", help="fit a self-play network to the labels")
    tr.add_argument("--out", required=True, help="directory of the shards (metrics.jsonl is appended there)")
    tr.add_argument(
        "--policy-out",
        type=Path,
        default=None,
        help="the fitted policy file (default OUT/policy.npz): one set of labels, several fits",
    )
    tr.add_argument(
        "--shards", type=int_at_least(1), default=None, help="fit to the first N shards only (default all)"
    )
    tr.add_argument(
        "--init", default=None, help="self-play policy file to start from (default: a fresh tile net)"
    )
    tr.add_argument("--hidden", type=int_at_least(1), default=128, help="fresh net: trunk width")
    tr.add_argument("--pair-hidden", type=int_at_least(1), default=64, help="fresh net: token width")
    tr.add_argument(
        "--loss",
        choices=LOSSES,
        default="xent",
        help="xent: cross-entropy to mc's move; advantage: squared error to the values' advantages; "
        "improve: cross-entropy to p0 * exp(values / temperature) (needs --init)",
    )
    tr.add_argument(
        "--temperature",
        type=positive_float,
        default=None,
        help=f"improve: pips a round that multiply a move's weight by e (default {DEFAULT_TEMPERATURE:g})",
    )
    tr.add_argument(
        "--anchor",
        type=float,
        default=0.0,
        help="xent: weight b in [0, 1) of the starting network's own policy in the targets (default 0)",
    )
    tr.add_argument("--epochs", type=int_at_least(1), default=4)
    tr.add_argument("--lr", type=positive_float, default=3e-4)
    tr.add_argument("--batch", type=int_at_least(1), default=512)
    tr.add_argument("--seed", type=int_at_least(0), default=0)
    args = parser.parse_args(argv)
    try:  # every input is checked before any work: one line, exit 2
        if args.step == "label":
            problem = output_problem(args.out, "directory")
            if problem is not None:
                raise ValueError(f"--out: {problem}")
            if not 0.0 <= args.teacher_share <= 1.0:
                raise ValueError(f"--teacher-share must be in [0, 1], got {args.teacher_share}")
            try:
                GameConfig.make(num_players=args.players)
            except ValueError as err:
                raise ValueError(f"--players: {err}") from None
            make_teacher(args.teacher, args.sims)
            if args.student is not None:
                _check_student(args.student, args.players)
        else:
            if not 0.0 <= args.anchor < 1.0:
                raise ValueError(
                    f"--anchor must be in [0, 1) so the label stays the argmax, got {args.anchor}"
                )
            if args.anchor and args.loss != "xent":
                raise ValueError(f"--anchor mixes the xent targets; --loss {args.loss} has none")
            if args.temperature is not None and args.loss != "improve":
                raise ValueError(
                    f"--temperature weights --loss improve's targets; --loss {args.loss} has none"
                )
            if args.loss == "improve" and args.init is None:
                raise ValueError("--loss improve weights the starting network's policy: give --init")
            if args.loss == "improve" and args.temperature is None:
                args.temperature = DEFAULT_TEMPERATURE
            if args.policy_out is not None and not args.policy_out.parent.is_dir():
                raise ValueError(f"--policy-out {args.policy_out}: no directory {args.policy_out.parent}")
            paths = shard_paths(args.out)
            if args.shards is not None and args.shards > len(paths):
                raise ValueError(f"--shards {args.shards}: {args.out} has {len(paths)} shards")
            for path in paths[: args.shards]:
                _check_shard(path)
            first = paths[0]
            if args.loss in ("advantage", "improve"):
                with np.load(first) as f:
                    if "values" not in f.files:
                        raise ValueError(
                            f"{args.out}: --loss {args.loss} needs shards labelled with --target values"
                        )
            if args.init is not None:
                try:
                    _check_policy(args.init, None)
                except OSError as err:
                    raise ValueError(f"--init: cannot read {args.init} ({os_error_text(err)})") from None
                except ValueError as err:
                    raise ValueError(f"--init: {err}") from None
    except (ValueError, OSError) as err:
        parser.error(str(err))
    if args.step == "train":
        return _train(args)

    def prepare() -> list[LabelJob]:  # what --out holds: checked under its lock
        try:
            _check_settings(args)
            return _to_label(args, _label_jobs(args))
        except (ValueError, OSError) as err:
            parser.error(str(err))

    def busy(text: str) -> int:
        parser.error(f"--out: {text}")

    return run_locked(args.out, prepare, lambda todo: _label(args, todo), busy)


if __name__ == "__main__":
    sys.exit(run_main(main, "python -m training.distill_mc"))
