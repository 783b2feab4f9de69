"""Behaviour-cloning warm start: the PPO policy imitates an expert agent before PPO.

Why: on 2 CPU cores PPO from a uniform policy spends most of its first million steps
rediscovering what a rule-based player already knows (play long chains, shed heavy
tiles, satisfy doubles). Cloning an expert first costs a few minutes and starts PPO
from that level; PPO then fine-tunes against the league.

Design:

1. **collect** — each training env plays its learner seat with the expert (a registered
   agent, e.g. ``planner``) against the league's opponents, through the same wrapper and
   the same :class:`~agents.mexican_train.base.Decision` interface, recording ``(observation, mask,
   expert action, return)`` (:meth:`SingleAgentEnv.collect_expert`); the envs run in
   parallel, each from its own seed;
2. **clone** — the very network PPO will train (:class:`GuardedMaskablePolicy`) is fitted
   by masked cross-entropy: ``-log pi(a_expert | s)`` under the action mask (the same
   masked distribution PPO samples from), plus ``vf_coef`` times the squared error of
   the value head against the expert's observed returns, so the critic starts calibrated
   and PPO's first advantages are not noise that would undo the cloned actor. A held-out
   10 % measures accuracy (argmax over legal logits = expert action). Its own Adam
   optimizer; PPO's optimizer starts fresh afterwards;
3. **fine-tune** — ordinary PPO from there. Collection steps are not counted in
   ``num_timesteps``.
"""

from __future__ import annotations

import json
import math
import sys
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.vec_env import VecEnv

from mtrain_env.tilegame import json_text
from mtrain_env.tilegame.files import atomic_writer
from training.policy import GuardedMaskablePolicy

_KEYS = ("obs", "mask", "action", "returns")


def collect(
    vec_env: VecEnv,
    expert: str,
    samples: int,
    seed: int,
    expert_params: Mapping[str, Any] | None = None,
    cache: str | Path | None = None,
    chunk: int = 4096,
) -> dict[str, np.ndarray]:
    """About ``samples`` expert decisions from all envs of ``vec_env`` in parallel (seeded).

    Collected in chunks of about ``chunk`` decisions (whole episodes); with ``cache`` each
    finished chunk is saved (atomically), so a slow expert (``mc``) killed mid-collection
    continues where it stopped. A cache made with another expert, parameters or seed is
    refused.
    """
    n = vec_env.num_envs
    params = dict(expert_params or {})
    identity = {"expert": expert, "params": params, "seed": seed, "chunk": chunk}
    parts: list[dict[str, np.ndarray]] = []
    done_chunks = 0
    cache_path = Path(cache) if cache is not None else None
    cached = _read_cache(cache_path) if cache_path is not None and cache_path.exists() else None
    if cached is not None:
        saved_identity, done_chunks, arrays = cached
        if saved_identity != json.loads(json.dumps(identity)):
            raise ValueError(f"{cache_path} holds expert data of another collection: {saved_identity}")
        parts.append(arrays)
    have = sum(len(p["action"]) for p in parts)
    while have < samples:
        for i in range(n):
            state = np.random.SeedSequence([seed, 7, done_chunks, i]).generate_state(1)[0]
            vec_env.set_attr("bc_seed", int(state), indices=[i])
        per_env = max(1, math.ceil(chunk / n))  # fixed, so chunks do not depend on `samples`
        new = vec_env.env_method("collect_expert", expert, per_env, None, params)
        parts.extend(new)
        have += sum(len(p["action"]) for p in new)
        done_chunks += 1
        if cache_path is not None:
            _save(cache_path, parts, {"identity": identity, "chunks": done_chunks})
    return {k: np.concatenate([p[k] for p in parts])[:samples] for k in _KEYS}


def _read_cache(path: Path) -> tuple[Any, int, dict[str, np.ndarray]] | None:
    """The cache's collection identity, chunk count and arrays; None (collect again, the
    same data: collection is seeded by chunk) for a file that is not a readable cache."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            meta = json_text.loads(str(saved["meta"]))
            arrays = {k: saved[k] for k in _KEYS}
        chunks = meta["chunks"]
        if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks < 1 or "identity" not in meta:
            raise ValueError(f"its meta must hold the identity and a chunk count >= 1, got chunks={chunks!r}")
        if len({len(a) for a in arrays.values()}) != 1:
            raise ValueError("arrays of different lengths")
    except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile, zlib.error) as err:
        reason = f"{type(err).__name__}: {err}"
        print(f"{path}: not a readable expert-data cache ({reason}); collecting again", file=sys.stderr)
        return None
    return meta["identity"], chunks, arrays


def _save(path: Path, parts: list[dict[str, np.ndarray]], meta: dict[str, Any]) -> None:
    arrays = {k: np.concatenate([p[k] for p in parts]) for k in _KEYS}
    with atomic_writer(path) as f:
        np.savez(f, meta=np.array(json.dumps(meta)), **arrays)  # type: ignore[arg-type]


def clone(
    policy: GuardedMaskablePolicy,
    data: Mapping[str, np.ndarray],
    epochs: int = 5,
    batch_size: int = 256,
    lr: float = 1e-3,
    vf_coef: float = 0.5,
    seed: int = 0,
    holdout: float = 0.1,
) -> dict[str, Any]:
    """Fit ``policy`` to the expert ``data`` (masked cross-entropy + value regression).

    Returns statistics: samples, epochs, final train loss, held-out accuracy and
    cross-entropy, and the expert's agreement with a uniform-random legal policy (the
    floor the accuracy should beat); the ``choice`` variants count only decisions with
    two or more legal actions (forced draws and passes are trivially right).
    """
    gen = th.Generator().manual_seed(int(seed))
    obs = th.as_tensor(data["obs"], dtype=th.float32)
    mask = th.as_tensor(data["mask"], dtype=th.bool)
    act = th.as_tensor(data["action"], dtype=th.long)
    ret = th.as_tensor(data["returns"], dtype=th.float32)
    total = obs.shape[0]
    if total < 2:
        raise ValueError(f"behaviour cloning needs at least 2 samples, got {total}")
    perm = th.randperm(total, generator=gen)
    n_val = max(1, round(total * holdout))
    val, tr = perm[:n_val], perm[n_val:]
    optimizer = th.optim.Adam(policy.parameters(), lr=lr)
    policy.set_training_mode(True)
    loss_value = math.nan
    for _ in range(epochs):
        order = tr[th.randperm(tr.numel(), generator=gen)]
        for start in range(0, order.numel(), batch_size):
            idx = order[start : start + batch_size]
            values, log_prob, _ = policy.evaluate_actions(obs[idx], act[idx], action_masks=mask[idx])
            loss = -log_prob.mean() + vf_coef * th.nn.functional.mse_loss(values.flatten(), ret[idx])
            optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            loss_value = float(loss.item())
    policy.set_training_mode(False)
    with th.no_grad():
        logits = policy.action_logits(obs[val])
        masked = th.where(mask[val], logits, th.tensor(-1e8))
        pred = masked.argmax(dim=1)
        accuracy = float((pred == act[val]).float().mean())
        log_probs = th.log_softmax(masked, dim=1)
        xent = float(-log_probs.gather(1, act[val].unsqueeze(1)).mean())
        legal = mask[val].sum(dim=1)
        uniform = float((1.0 / legal.float()).mean())
        choice = legal > 1  # decisions with a real choice (not a forced draw or pass)
        hits = (pred == act[val])[choice].float()
        choice_accuracy = float(hits.mean()) if hits.numel() else math.nan
        choice_uniform = float((1.0 / legal[choice].float()).mean()) if hits.numel() else math.nan
    return {
        "samples": int(total),
        "epochs": int(epochs),
        "train_loss": loss_value,
        "holdout_accuracy": accuracy,
        "holdout_cross_entropy": xent,
        "uniform_legal_accuracy": uniform,
        "holdout_choice_accuracy": choice_accuracy,
        "uniform_choice_accuracy": choice_uniform,
        "holdout_choice_share": float(choice.float().mean()),
    }
