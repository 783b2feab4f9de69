"""``mc``: determinized Monte Carlo search (perfect-information Monte Carlo).

For each decision with more than one legal action:

1. sample a full state consistent with everything the seat knows
   (:func:`mtrain_env.core.public.sample_state`: opponents' hand counts and shown voids,
   the boneyard in random order);
2. for EVERY candidate action, copy that state, apply the candidate and play the rest of
   the ROUND with a fast default policy (``greedy``: the highest-value tile, own train on
   ties; the rules core is used directly, no env, no observation);
3. score the round for this seat: the table's mean penalty minus its own (the zero-sum
   result), or its positive score minus the mean with ``positive_scoring``;
4. repeat; choose the candidate with the best mean (ties: the lowest action id).

Every candidate is rolled out on the same determinizations (common random numbers; the
rollout policy itself is deterministic), so differences between candidates are not
drowned in deal noise.

Budget: ``rollouts`` = rollouts per decision in total (``rollouts // candidates``
determinizations, at least one); ``ms`` = wall-clock milliseconds per decision (checked
before each rollout; a determinization is counted only once every candidate has its
rollout on it, and the first one always completes). With both, whichever ends first.
Seeded (``reset(seed)``) and deterministic with ``rollouts`` only; ``ms`` makes the
number of samples, hence the choice, depend on machine speed.
"""

from __future__ import annotations

import time
from functools import cache
from typing import Any

import numpy as np

from agents.base import Agent, Decision
from agents.chains import ChainSolver
from agents.greedy import value_table
from mtrain_env.core.config import GameConfig
from mtrain_env.core.public import sample_state
from mtrain_env.core.rules import MexicanTrain
from mtrain_env.core.state import GameState, Phase

#: rollouts per decision when neither ``rollouts`` nor ``ms`` is given
DEFAULT_ROLLOUTS = 200

_ROUND_OVER = Phase.ROUND_OVER


@cache
def greedy_keys(config: GameConfig) -> tuple[tuple[int, ...], ...]:
    """Per seat, a key per absolute move for the greedy rollout policy (higher is better).

    Value of the tile (R2, ``blank_penalty``) first, the seat's own train on ties, then the
    lowest move id (``max`` keeps the first); DRAW and PASS rank below every play, so an R9
    opening chain is never stopped early.
    """
    values = value_table(config.max_pips, config.blank_penalty)
    width = config.num_trains
    out = []
    for seat in range(config.num_players):
        keys = [values[m // width] * 2 + (m % width == seat) for m in range(config.draw_action)]
        keys += [-1, -1]  # DRAW, PASS
        out.append(tuple(keys))
    return tuple(out)


def rollout(game: MexicanTrain, s: GameState, keys: tuple[tuple[int, ...], ...]) -> None:
    """Play ``s`` to the end of its round with the greedy policy (in place)."""
    legal_moves = game.legal_moves
    apply = game.apply
    while s.phase < _ROUND_OVER:
        moves = legal_moves(s)
        if len(moves) == 1:
            apply(s, moves[0])
        else:
            apply(s, max(moves, key=keys[s.current].__getitem__))


class ChainPolicy:
    """A fast rollout policy after the planner: keep each seat's own-train chain.

    At the start of a rollout every seat's longest own-train chain is reserved
    (:class:`agents.chains.ChainSolver`). Then each seat lays, by preference: a tile on the
    double it owes a follower (R18); not a double it cannot follow; an unreserved tile
    (extra) on another train; a reserved tile on its own train; anything else; the most
    pips first within a class. In the R9 opening it lays reserved tiles and stops when none
    fits. Deterministic.
    """

    def __init__(self, game: MexicanTrain) -> None:
        config = game.config
        self.game = game
        self.solver = ChainSolver(config.tiles, config.blank_penalty, node_limit=2_000)
        self.values = value_table(config.max_pips, config.blank_penalty)
        self.multi_opening = config.multi_tile_opening

    def rollout(self, s: GameState) -> None:
        """Play ``s`` to the end of its round (in place)."""
        game = self.game
        legal_moves = game.legal_moves
        apply = game.apply
        width = game.width
        draw = game.draw
        pass_ = game.pass_
        tiles = game.tiles
        match = tiles.match
        pairs = tiles.tiles
        values = self.values
        longest = self.solver.longest
        reserved = []
        for q in range(game.n):
            chain = longest(s.ends[q], s.hands[q])
            m = 0
            for t in chain:
                m |= 1 << t
            reserved.append(m)
        while s.phase < _ROUND_OVER:
            moves = legal_moves(s)
            if len(moves) == 1:
                apply(s, moves[0])
                continue
            p = s.current
            res = reserved[p]
            hand = s.hands[p]
            if s.phase == Phase.OPENING and self.multi_opening:
                pick = -1
                for m in moves:
                    if m < draw and res >> (m // width) & 1:
                        pick = m
                        break
                if pick < 0:
                    pick = pass_ if pass_ in moves else moves[0]
                apply(s, pick)
                continue
            owed = s.turn_doubles[-1] if s.owes and s.turn_doubles else -1
            best = moves[0]
            best_key = -(1 << 30)
            for m in moves:
                if m >= draw:
                    continue
                t, tr = divmod(m, width)
                a, b = pairs[t]
                if tr == owed:
                    cls = 6
                elif a == b and not (hand & ~(1 << t) & match[a]):
                    cls = 0
                elif tr != p:
                    cls = 4 if not res >> t & 1 else 1
                else:
                    cls = 3 if res >> t & 1 else 2
                key = cls * 1000 + values[t]
                if key > best_key:
                    best_key, best = key, m
            apply(s, best)


def round_result(config: GameConfig, s: GameState, seat: int) -> float:
    """The finished round's zero-sum result for ``seat`` (higher is better)."""
    scores = s.round_scores[-1]
    mean = sum(scores) / len(scores)
    own = scores[seat]
    return own - mean if config.positive_scoring else mean - own


class MCAgent(Agent):
    """Determinized Monte Carlo with greedy rollouts to the end of the round.

    Args:
        seed: seeds the determinizations.
        rollouts: total rollouts per decision (see the module docstring).
        ms: milliseconds per decision (wall clock; not reproducible).
    """

    name = "mc"

    def __init__(
        self,
        seed: int | None = None,
        rollouts: int | None = None,
        ms: float | None = None,
        policy: str = "greedy",
    ) -> None:
        super().__init__(seed)
        if policy not in ("greedy", "chain"):
            raise ValueError(f"policy must be 'greedy' or 'chain', got {policy!r}")
        self.policy = policy
        self._chain_policies: dict[GameConfig, ChainPolicy] = {}
        if rollouts is None and ms is None:
            rollouts = DEFAULT_ROLLOUTS
        if rollouts is not None and rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {rollouts}")
        if ms is not None and ms <= 0:
            raise ValueError(f"ms must be > 0, got {ms}")
        self.rollouts = rollouts
        self.ms = ms
        self.last_rollouts = 0  #: rollouts run for the last decision
        self.last_samples = 0  #: determinizations counted for the last decision
        self.last_values: dict[int, float] = {}  #: mean result per candidate action, last decision

    def params(self) -> dict[str, Any]:
        return {"rollouts": self.rollouts, "ms": self.ms, "policy": self.policy}

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        self.last_rollouts = 0
        self.last_samples = 0
        self.last_values = {}
        if len(legal) == 1:
            return int(legal[0])
        start = time.perf_counter()
        game = decision.game
        config = game.config
        view = decision.view
        seat = view.seat
        moves = [decision.to_move(a) for a in legal]
        k = len(moves)
        keys = greedy_keys(config)
        chain_policy = None
        if self.policy == "chain":
            chain_policy = self._chain_policies.get(config)
            if chain_policy is None:
                chain_policy = self._chain_policies[config] = ChainPolicy(game)
        samples = max(1, self.rollouts // k) if self.rollouts is not None else None
        deadline = None if self.ms is None else start + self.ms / 1000.0
        base = int(self.rng.integers(1 << 62))
        totals = [0.0] * k
        done = 0
        while samples is None or done < samples:
            sample_rng = np.random.default_rng([base, done])
            root = sample_state(game, view, sample_rng)
            results = []
            for m in moves:
                if deadline is not None and done and time.perf_counter() >= deadline:
                    break
                s = root.copy()
                game.apply(s, m)
                if chain_policy is None:
                    rollout(game, s, keys)
                else:
                    chain_policy.rollout(s)
                results.append(round_result(config, s, seat))
                self.last_rollouts += 1
            if len(results) < k:
                break  # out of time: the partial determinization is dropped
            totals = [t + r for t, r in zip(totals, results, strict=True)]
            done += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.last_samples = done
        means = [t / done for t in totals]
        self.last_values = dict(zip(legal, means, strict=True))
        best = max(range(k), key=lambda i: (means[i], -i))
        return int(legal[best])
