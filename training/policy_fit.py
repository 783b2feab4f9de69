"""Fitting a self-play network's policy to search labels (torch): the pieces that expert
iteration (:mod:`training.expert_iteration`) and the mc distillation
(:mod:`training.distill_mc`) share: masked cross-entropy to a visit distribution, Adam over
minibatches, the held-out games, one torch thread."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch as th

__all__ = ["fit_minibatches", "held_out", "one_torch_thread", "policy_loss", "train_policy"]


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


def policy_loss(net: Any, obs: th.Tensor, mask: th.Tensor, target: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
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
    keys = ("obs", "mask", "target")
    tensors = {k: th.as_tensor(data[k]) for k in keys}
    train_idx = np.flatnonzero(~held)
    test_idx = th.as_tensor(np.flatnonzero(held))
    with th.no_grad():  # the network as it comes (fresh or --init): what fitting changed
        before_loss, before_agree = policy_loss(net, *(tensors[k][test_idx] for k in keys))
    train_loss = fit_minibatches(
        net,
        tensors,
        train_idx,
        lambda *b: policy_loss(net, *b)[0],
        keys,
        epochs,
        lr,
        batch,
        seed,
    )
    t = data["target"][train_idx]
    entropy = max(0.0, float(-(t * np.log(np.where(t > 0, t, 1.0))).sum(1).mean())) if len(t) else 0.0
    with th.no_grad():
        test_loss, agree = policy_loss(net, *(tensors[k][test_idx] for k in keys))
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
