"""``champion``: determinized search whose prior and rollouts are a self-play network.

``champion`` is :class:`~agents.mexican_train.mc.MCAgent` with ``prior="policy"`` and
``leaf="policy"``: at each decision the candidates are compared on the same determinized
worlds (hidden tiles re-dealt consistently with the seat's view, common random numbers,
successive halving), each world played to the round's end with the seat's later choices
made by the network (batched over the worlds, float32 numpy) and the other seats by the
chain policy; the network's own move is the default, kept unless another beats it by
``z`` standard errors of the paired differences. Search on top of a learned policy, with
the policy as its default player: policy improvement by rollouts (Tesauro & Galperin
1996), the PIMC half of AlphaZe**.

The network is the table's shipped ``graph`` self-play policy (:data:`TABLE_POLICIES`:
2 to 8 players, double-12), or ``path=``. ``champion_policy`` is that network alone
(argmax, no search, ~0.2 ms a decision): the fast player.

With ``pool=`` > 1 the worlds carry inference: each is resampled from ``pool`` samples by
how likely they are given what the table shows (``mc_infer``'s weights: the chain-keeping
model of the opponents' attributed plays, :mod:`agents.mexican_train.inference`, or with
``model="learned"`` the table's hand model, :mod:`agents.mexican_train.hand_model`).
``pool=1`` (default) is the plain champion, decision for decision; neither weighting made
it measurably stronger (docs/champion.md, step 7). With ``particles=N`` the worlds come instead from a
particle filter of the round's public moves, which the play loop tells it
(:meth:`inform`; :mod:`agents.mexican_train.particles`): +0.18 [-0.79, 1.14] pips a round
over 1,000 paired deals, not significant (docs/champion.md, step 8, where ``oracle_champion`` measures
what perfect inference would give: +11.3). With ``history=STEPS`` they are the states of an
MCMC walk over the round's whole hidden history, every opponent move re-checked at each
proposal (:mod:`agents.mexican_train.history`, docs/champion.md step 9).

Deterministic given the seed and ``sims=`` (not ``ms=``); reads only the seat's view and
its own observation (the harness's leak check covers it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from agents.mexican_train.base import Agent, Decision, table_file
from agents.mexican_train.history import DEFAULT_THIN, history_factory
from agents.mexican_train.mc import VALUE_CHUNK, Runner
from agents.mexican_train.mc_infer import DEFAULT_ALPHA, DEFAULT_BETA, MCInferAgent
from agents.mexican_train.particles import (
    DEFAULT_EPS,
    HeardWorlds,
    WorldTracker,
    filter_factory,
    shuffled_boneyards,
)
from agents.mexican_train.ppo import REFERENCE_POLICY, PPOAgent
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.tilegame.validate import as_int

__all__ = ["DEFAULT_SIMS", "TABLE_POLICIES", "ChampionAgent", "ChampionPolicyAgent", "table_policy"]

_POLICIES = Path(__file__).resolve().parent.parent / "policies"

#: the shipped network per table ``(players, N of double-N)``: ``graph`` self-play runs
#: (README, "The graph network"; 3 and 5 players: docs/champion.md, step 16; 7 and 8
#: players: step 17); 4 players is the reference policy
TABLE_POLICIES: dict[tuple[int, int], Path] = {
    (2, 12): _POLICIES / "graph_2p.npz",
    (3, 12): _POLICIES / "graph_3p.npz",
    (4, 12): REFERENCE_POLICY,
    (5, 12): _POLICIES / "graph_5p.npz",
    (6, 12): _POLICIES / "graph_6p.npz",
    (7, 12): _POLICIES / "graph_7p.npz",
    (8, 12): _POLICIES / "graph_8p.npz",
}

#: rollouts per decision by default: 4 players, ~30 ms a decision as the harness counts
#: (every call), ~55-60 ms a decision with a choice, on one core. ``sims=800`` takes twice
#: that and is 0.80 [0.34, 1.26] pips a round stronger over 3,000 deals (docs/champion.md, step 12);
#: ``extend=800`` gains as much at 1.4 times the default's time, rollouts spent on the close
#: decisions only: the budget the issue-12 targets are measured at (docs/champion.md, step 13)
DEFAULT_SIMS = 400


def table_policy(config: GameConfig) -> Path:
    """The shipped network of ``config``'s table; ``ValueError`` naming the tables that have one."""
    return table_file(
        TABLE_POLICIES, config, "champion's networks", "give path= a self-play policy file trained for it"
    )


class ChampionPolicyAgent(Agent):
    """The champion's network alone (argmax over the legal actions, no search): the fast player.

    Args:
        seed: unused (deterministic); kept for the registry's signature.
        path: a self-play policy file; default the table's shipped one (:func:`table_policy`).
    """

    name = "champion_policy"

    def __init__(self, seed: int | None = None, path: str | Path | None = None) -> None:
        super().__init__(seed)
        self.path = None if path is None else str(path)
        self._players: dict[GameConfig, PPOAgent] = {}

    def player(self, config: GameConfig) -> PPOAgent:
        """The ``ppo`` agent that plays ``config``'s table (one per config)."""
        agent = self._players.get(config)
        if agent is None:
            agent = self._players[config] = PPOAgent(path=self.path or table_policy(config))
        return agent

    def check_game(self, config: GameConfig) -> None:
        self.player(config).check_game(config)

    def act(self, decision: Decision) -> int:
        return self.player(decision.game.config).act(decision)

    def params(self) -> dict[str, Any]:
        return {"path": self.path}

    def last_annotations(self) -> dict[str, Any] | None:
        """The last table's network probabilities (as the ``ppo`` agent's)."""
        return next(iter(self._players.values())).last_annotations() if self._players else None


class ChampionAgent(MCInferAgent):
    """``mc`` with the table's network as its prior and its rollouts (module docstring),
    optionally on worlds weighted by the opponents' plays (``pool`` > 1: ``mc_infer``'s).

    Args:
        seed: seeds the worlds.
        sims: rollouts per decision (default :data:`DEFAULT_SIMS`); ``ms``: wall-clock
            milliseconds instead (not reproducible); with both, whichever ends first.
        z: the margin, in standard errors, by which a move must beat the network's move.
        path: a self-play policy file (default: the table's shipped one).
        pool: samples each world is resampled from by the opponents' attributed plays
            (:mod:`agents.mexican_train.inference`); 1 (default): the prior's worlds, no inference.
        beta: the opponent model's continuation weight (with ``pool`` > 1).
        model: what weights the worlds (``"chain"`` or ``"learned"``), as
            :class:`~agents.mexican_train.mc_infer.MCInferAgent`'s.
        alpha: the learned model's temper (its log-weights times ``alpha``).
        hands: the learned hand model's file (default: the table's shipped one).
        particles: 0 (default): no filter; else the worlds are drawn from a particle filter
            of that many worlds, weighted by every opponent move heard since the round's
            start under a planner model (:mod:`agents.mexican_train.particles`).
        eps: the filter's (or the walk's) share of probability for moves the model would not make.
        history: 0 (default): no walk; else the worlds are every tenth state of an MCMC walk
            of that many proposals a decision over the round's hidden history, scored on
            every opponent move under a planner model (:mod:`agents.mexican_train.history`).
        policy: how the other seats play in the rollouts: ``"chain"`` (default, the
            planner's ranking with an estimated chain damage) or ``"planner"`` (the planner's
            moves exactly, its chain damage searched at each choice).
        extend: rollouts added to a decision whose gate against the network's move is
            close (default 0: none): ``mc``'s ``extend=`` (docs/champion.md, step 13).
        threads: threads one decision's worlds are split over (default 1): the same
            rollouts and choices in less wall time on idle cores (``mc``'s ``threads=``);
            on the prior's worlds only (not with ``pool``, ``particles`` or ``history``).
        levels: 0 (default): the network plays the seat's later choices in every rollout;
            ``k``: each of them is the best move by ``k`` levels of search over the
            network's playouts ON THAT WORLD (``oracle[rollout=search]``'s search on a
            sampled world instead of the true one: fair, but each later choice knows its
            world's hidden hands, PIMC's strategy fusion). About six times the cost of a
            rollout a level (docs/champion.md, step 21).
    """

    name = "champion"
    #: the play loop tells it every move (used by the particle filter only)
    listens: ClassVar[bool] = True

    def __init__(
        self,
        seed: int | None = None,
        sims: int | None = None,
        ms: float | None = None,
        z: float = 1.0,
        path: str | Path | None = None,
        pool: int = 1,
        beta: float = DEFAULT_BETA,
        model: str = "chain",
        alpha: float = DEFAULT_ALPHA,
        hands: str | None = None,
        particles: int = 0,
        eps: float = DEFAULT_EPS,
        history: int = 0,
        policy: str = "chain",
        extend: int = 0,
        threads: int = 1,
        levels: int = 0,
    ) -> None:
        for knob, value in (("particles", particles), ("history", history), ("levels", levels)):
            as_int(knob, value, low=0, numpy=False, error=ValueError)
        if 0 < history < DEFAULT_THIN:  # it keeps every DEFAULT_THIN-th state: none at all
            every = f"a world every {DEFAULT_THIN} proposals"
            raise ValueError(f"history must be 0 (no walk) or >= {DEFAULT_THIN} ({every}), got {history}")
        if particles and history:
            raise ValueError("particles= and history= are two sources of worlds: give one")
        if (particles or history) and pool > 1:
            raise ValueError("particles= and history= draw the worlds from the log: they exclude pool= > 1")
        if (particles or history) and threads != 1:
            raise ValueError("particles= and history= deal their worlds on one thread: threads must be 1")
        if not 0.0 < eps < 1.0:
            raise ValueError(f"eps must be in (0, 1), got {eps!r}")
        if sims is None and ms is None:
            sims = DEFAULT_SIMS
        super().__init__(
            seed,
            sims=sims,
            ms=ms,
            z=z,
            prior="policy",
            leaf="policy",
            policy=policy,
            engine="compiled",
            path=str(REFERENCE_POLICY if path is None else path),  # replaced per table below
            pool=pool,
            beta=beta,
            model=model,
            alpha=alpha,
            hands=hands,
            extend=extend,
            threads=threads,
        )
        self.table_path = None if path is None else str(path)
        self._prior = ChampionPolicyAgent(path=self.table_path)
        self.particles = particles
        self.eps = float(eps)
        self.history = history
        self.levels = levels
        self._heard: HeardWorlds | None = None
        if particles:
            self._heard = HeardWorlds(filter_factory(particles, self.eps))
        elif history:
            self._heard = HeardWorlds(history_factory(history, DEFAULT_THIN, self.eps))
        self._tracker: WorldTracker | None = None

    def params(self) -> dict[str, Any]:
        inference = self._inference_params() if self.pool > 1 else {}
        if self.particles:
            inference = {"particles": self.particles, "eps": self.eps}
        if self.history:
            inference = {"history": self.history, "eps": self.eps}
        others = {"policy": self.policy} if self.policy != "chain" else {}  # the other seats' rollouts
        knobs = {"sims": self.rollouts, "ms": self.ms, "z": self.z, "path": self.table_path}
        extend = {"extend": self.extend} if self.extend else {}
        threads = {"threads": self.threads} if self.threads > 1 else {}
        levels = {"levels": self.levels} if self.levels else {}
        return {**knobs, **inference, **others, **extend, **threads, **levels}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if self._heard is not None:
            self._heard.reset()

    def inform(self, seat: int, action: int) -> None:
        if self._heard is not None:
            self._heard.hear(seat, action)

    def act(self, decision: Decision) -> int:
        if self._heard is not None:
            seed = int(self.rng.integers(1 << 62))
            self._tracker = self._heard.update(
                decision.game, decision.codec, decision.view, np.random.default_rng(seed)
            )
        return super().act(decision)

    def _compiled_runner(self, decision: Decision, moves: list[int]) -> Runner:
        if self._heard is None:
            return super()._compiled_runner(decision, moves)
        config = decision.game.config
        cgame, sc, _ = self._compiled_game(config)
        leaves = self._network_leaves(config)
        seat = decision.view.seat
        tracker = self._tracker
        assert tracker is not None  # act() updated it
        weights = tracker.weights()
        worlds = tracker.worlds
        compiled: dict[int, np.ndarray] = {}

        def world(base: int, index: int) -> np.ndarray:
            rng = np.random.default_rng([base, index, 6])
            i = int(rng.choice(len(weights), p=weights))
            if i not in compiled:
                compiled[i] = cgame.to_compiled(worlds[i])
            return shuffled_boneyards(compiled[i], base, index, 1)[0]

        def rows(det: Any, base: int, first: int, count: int, candidates: list[int]) -> np.ndarray:
            roots = np.stack([world(base, d) for d in range(first, first + count)])
            return leaves.results_on(roots, cgame.tables, seat, candidates, sc)

        return self._staged_runner(decision, moves, rows, VALUE_CHUNK)

    def _network_path(self, config: GameConfig) -> str:
        return self.table_path or str(table_policy(config))

    def _leaf_levels(self) -> int:
        return self.levels
