"""Per-seat return bookkeeping of self-play (training/selfplay/seatbook.py).

A hand-computed case, then the book against a slow reference (plain Python lists per
``(game, seat)``) on transitions of the real batched engine over several rollouts.
"""

from __future__ import annotations

import numpy as np
import pytest

from mtrain_env.mexican_train.compiled.batch import BatchedMexicanTrain
from training.selfplay.seatbook import SeatBook

OBS, ACT = 3, 4


def _record(book: SeatBook, game: int, seat: int, value: float) -> int:
    (idx,) = book.record(
        np.array([game]),
        np.array([seat]),
        np.zeros((1, OBS), np.float32),
        np.ones((1, ACT), np.bool_),
        np.array([0]),
        np.array([0.0], np.float32),
        np.array([value], np.float32),
    )
    return int(idx)


def test_hand_computed_two_seats() -> None:
    """One game, two seats: seat 0 acts twice, seat 1 once, a forced move ends the round."""
    book = SeatBook(1, 2, OBS, ACT, capacity=16)
    book.begin()
    none = np.zeros((1, 2), np.float32)
    no = np.zeros(1, np.bool_)
    _record(book, 0, 0, 0.1)  # d0: seat 0
    book.credit(none, no)
    _record(book, 0, 1, 0.2)  # d1: seat 1
    book.credit(none, no)
    _record(book, 0, 0, 0.2)  # d2: seat 0
    book.credit(none, no)
    # seat 1's forced move (not recorded) ends the round and the episode
    book.credit(np.array([[0.3, -0.3]], np.float32), np.array([True]))
    _record(book, 0, 1, 0.5)  # d3: seat 1 in the next episode (a tail: not trained yet)
    book.credit(none, no)
    batch = book.finish(gamma=1.0, lam=0.5)
    # d2: done, r = 0.3: A = 0.3 - 0.2 = 0.1
    # d1: done, r = -0.3: A = -0.3 - 0.2 = -0.5
    # d0: r = 0, next d2: delta = 0 + 0.2 - 0.1 = 0.1; A = 0.1 + 0.5 * 0.1 = 0.15
    np.testing.assert_allclose(batch.value, [0.1, 0.2, 0.2])
    np.testing.assert_allclose(batch.advantage, [0.15, -0.5, 0.1], atol=1e-6)
    np.testing.assert_allclose(batch.returns, [0.25, -0.3, 0.3], atol=1e-6)
    # the tail d3 opens the next rollout, with the rewards it collects there
    book.begin()
    assert book.size == 1 and book.value[0] == np.float32(0.5)
    book.credit(np.array([[0.0, 0.25]], np.float32), np.array([False]))  # a session round ends
    _record(book, 0, 1, 0.75)
    batch = book.finish(gamma=0.9, lam=0.5)
    # d3: r = 0.25, next (a tail): delta = 0.25 + 0.9 * 0.75 - 0.5 = 0.425, A' = 0
    np.testing.assert_allclose(batch.advantage, [0.425], atol=1e-6)


def test_rewards_of_a_seat_without_decisions_are_not_given_to_others() -> None:
    book = SeatBook(2, 2, OBS, ACT, capacity=8)
    book.begin()
    _record(book, 1, 0, 0.0)
    book.credit(np.array([[0.5, -0.5], [0.2, -0.2]], np.float32), np.array([True, True]))
    batch = book.finish(1.0, 1.0)
    np.testing.assert_allclose(batch.returns, [0.2])


class _Reference:
    """Every decision of the run in lists per (game, seat); GAE recomputed from scratch."""

    def __init__(self) -> None:
        self.chains: dict[tuple[int, int], list[dict]] = {}
        self.trained: set[int] = set()

    def record(self, game: int, seat: int, uid: int, value: float) -> None:
        self.chains.setdefault((game, seat), []).append(
            {"uid": uid, "value": value, "reward": 0.0, "done": False}
        )

    def credit(self, game: int, rewards: np.ndarray, terminated: bool) -> None:
        for seat, r in enumerate(rewards):
            chain = self.chains.get((game, seat))
            if chain and not chain[-1]["done"]:
                chain[-1]["reward"] += float(r)
                if terminated:
                    chain[-1]["done"] = True

    def finish(self, gamma: float, lam: float) -> dict[int, tuple[float, float]]:
        """uid -> (advantage, return) of the decisions trainable now."""
        out: dict[int, tuple[float, float]] = {}
        for chain in self.chains.values():
            tail = len(chain) - 1 if not chain[-1]["done"] else None
            adv_next = 0.0
            for k in range(len(chain) - 1, -1, -1):
                d = chain[k]
                if k == tail:
                    adv_next = 0.0
                    continue
                if d["done"]:
                    a = d["reward"] - d["value"]
                else:
                    nxt = chain[k + 1]
                    a = d["reward"] + gamma * nxt["value"] - d["value"] + gamma * lam * adv_next
                adv_next = a
                if d["uid"] not in self.trained:
                    out[d["uid"]] = (a, a + d["value"])
        self.trained.update(out)
        return out


@pytest.mark.parametrize(("players", "seed"), [(2, 0), (4, 1), (3, 2)])
def test_book_matches_slow_reference_on_real_games(players: int, seed: int) -> None:
    games, steps, rollouts, gamma, lam = 3, 40, 6, 0.97, 0.8
    env = BatchedMexicanTrain(games, copy=True, num_players=players, max_pips=6)
    obs, mask, seat, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    book = SeatBook(games, players, env.obs_size, env.num_actions, capacity=steps * games)
    ref = _Reference()
    uid = 0
    checked = 0
    for _ in range(rollouts):
        book.begin()
        for _ in range(steps):
            legal = mask.sum(1)
            choice = np.flatnonzero(legal > 1)
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
            values = (uid + np.arange(choice.size) + 1) / 1024.0  # unique, exact in float32
            book.record(
                choice,
                seat[choice],
                obs[choice],
                mask[choice].astype(np.bool_),
                actions[choice],
                np.zeros(choice.size, np.float32),
                values.astype(np.float32),
            )
            for g, v in zip(choice.tolist(), values.tolist(), strict=True):
                ref.record(g, int(seat[g]), round(v * 1024), v)
            uid += choice.size
            obs, mask, seat, rewards, terminated, _info = env.step(actions)
            book.credit(rewards, terminated)
            for g in range(games):
                ref.credit(g, rewards[g], bool(terminated[g]))
        batch = book.finish(gamma, lam)
        expected = ref.finish(gamma, lam)
        got = {
            round(float(v) * 1024): (a, r)
            for v, a, r in zip(batch.value, batch.advantage, batch.returns, strict=True)
        }
        assert set(got) == set(expected)
        for key, (a, r) in expected.items():
            assert got[key] == pytest.approx((a, r), abs=1e-5)
        checked += len(got)
    assert checked > 100  # rounds ended and chains were carried across rollouts


@pytest.mark.parametrize(("players", "pips"), [(2, 6), (4, 12), (8, 18)])
def test_row_bytes_is_what_a_book_holds(players: int, pips: int) -> None:
    """:meth:`SeatBook.row_bytes` (what a refused ``num_games x steps`` says the book would
    take) is the size of the book's arrays per decision."""
    env = BatchedMexicanTrain(1, num_players=players, max_pips=pips)
    book = SeatBook(3, players, env.obs_size, env.num_actions, capacity=5)
    rows = [v.nbytes for k, v in vars(book).items() if isinstance(v, np.ndarray) and k != "last"]
    assert sum(rows) == book.capacity * SeatBook.row_bytes(env.obs_size, env.num_actions)
