"""``mc``: determinized Monte Carlo search (perfect-information Monte Carlo).

For each decision with more than one legal action:

1. sample a full state consistent with everything the seat knows
   (:func:`mtrain_env.mexican_train.core.public.sample_state`: opponents' hand counts and shown voids,
   the boneyard in random order) — a determinization;
2. for each candidate action, copy that state, apply the candidate and play the rest of
   the ROUND with a fast default policy, straight on the rules core (no env, no
   observation): ``chain`` (default,
   :class:`~agents.mexican_train.rollout_policies.ChainPolicy`, the planner's ranking of plays
   with a cheap chain-damage estimate) or ``greedy`` (the highest-value tile);
3. score the round for this seat: the table's mean penalty minus its own (the zero-sum
   result), or its positive score minus the mean with ``positive_scoring``;
4. choose the candidate with the best mean (ties: the lowest action id) — but with the
   planner as prior (default), its move stays unless the best beats it by more than ``z``
   standard errors of their paired differences. ``prior="policy"`` makes a trained policy
   (``path=``, as the ``ppo`` agent reads it: one forward pass on the seat's own
   observation) the default instead: search on top of a learned player.

``leaf="policy"`` plays step 2's rollouts with the seat's later choices made by a
self-play network (batched over the worlds, :mod:`agents.mexican_train.value_leaf`; the
others keep ``policy``); the ``champion`` agent is ``leaf="policy"`` with
``prior="policy"``.

Why the prior: a round's result varies far more from deal to deal than good and bad moves
differ, and the paired difference of two candidates on one determinization hardly less
(the games diverge after the first move: different draws, different blocks). With the
rollouts a decision can afford, most gaps are noise; gating keeps the planner's sound
default and takes the search's corrections where they are clear.

Candidates are compared on the same determinizations (common random numbers; the rollout
policies are deterministic), so their differences are not drowned in deal noise. The
budget is spent by successive halving: ``ceil(log2(k))`` stages over the ``k`` candidates,
each with an equal share of the budget; after each stage the better half (by mean over
every determinization so far, all shared by the survivors) goes on.

Budget: ``rollouts`` = rollouts per decision in total; ``ms`` = wall-clock milliseconds
per decision (checked before each rollout; every stage runs at least one determinization,
and a determinization counts only once every surviving candidate has its rollout on it).
With both, whichever ends first. A budget below one rollout per candidate still runs one
each. With one legal action there is no search.

Seeded (``reset(seed)``) and deterministic with ``rollouts`` only; with ``ms`` the number
of samples, hence the choice, depends on the machine's speed and load.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from agents.mexican_train.base import Agent, Decision
from agents.mexican_train.planner import PlannerAgent
from agents.mexican_train.ppo import REFERENCE_POLICY, PPOAgent
from agents.mexican_train.rollout_policies import ChainPolicy, GreedyPolicy, compiled_rollouts, round_result
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import sample_state
from mtrain_env.mexican_train.core.rules import MexicanTrain
from mtrain_env.mexican_train.core.state import GameState
from mtrain_env.tilegame.validate import as_int

#: rollouts per decision when neither ``rollouts`` nor ``ms`` is given
DEFAULT_ROLLOUTS = 200
#: rollout policies
POLICIES = ("chain", "greedy")
#: the rollout policies of the compiled engine (``greedy``: the pure one only)
COMPILED_POLICIES = ("chain",)
#: the rollout policies a network ``leaf`` can have the other seats play
LEAF_POLICIES = ("chain",)
#: what makes the default move (``MCAgent(prior=...)``)
PRIORS = (None, "planner", "policy")
#: the priors that read a network (``path=``)
LEARNED_PRIORS = ("policy",)
#: how a candidate is valued on a world (``MCAgent(leaf=...)``)
LEAVES = ("rollout", "policy")
#: the leaves that read a self-play network (``path=``)
NETWORK_LEAVES = ("policy",)
#: determinizations per batched network call under a time budget (a network ``leaf``)
VALUE_CHUNK = 32
#: the most threads one decision's rollouts are split over (each holds its own scratch
#: states; the self-play learner's torch threads have the same bound)
MAX_THREADS = 64
#: where rollouts run (``MCAgent(engine=...)``)
ENGINES = ("auto", "compiled", "python")
#: determinizations per compiled call under a time budget (the clock is read between calls)
CHUNK = 4
#: ``extend=``: a decision is close when its best challenger's paired t against the default
#: move is within this many standard errors of the gate ``z`` (on either side)
CLOSE_BAND = 1.0

#: a stage's results: one row per determinization, one result per candidate still in the race
Rows = Iterator[list[float]]
#: ``run(base, first, alive, quota, deadline)``: the rows of one successive-halving stage
Runner = Callable[[int, int, list[int], "int | None", "float | None"], Rows]
#: ``(determinizer, base, first, count, candidates) -> (count, k)`` results: what a compiled
#: runner's stages evaluate (``MCAgent._staged_runner``)
RowsOf = Callable[[Any, int, int, int, list[int]], np.ndarray]


def paired_mean_se(challenger: list[float], default: list[float]) -> tuple[float, float] | None:
    """Mean and standard error of the paired differences ``challenger - default`` (the same
    worlds), or None with fewer than two."""
    diffs = np.subtract(challenger, default)
    if len(diffs) < 2:
        return None
    return float(diffs.mean()), float(diffs.std(ddof=1)) / math.sqrt(len(diffs))


def paired_t(challenger: list[float], default: list[float]) -> float:
    """The paired t statistic of ``challenger`` minus ``default`` (+-inf when every
    difference is the same and not zero; 0 when they are all zero or there is one)."""
    stats = paired_mean_se(challenger, default)
    if stats is None:
        return 0.0
    mean, se = stats
    return mean / se if se > 0 else math.copysign(math.inf, mean) if mean else 0.0


class MCAgent(Agent):
    """Determinized Monte Carlo with rollouts to the end of the round.

    Args:
        seed: seeds the determinizations.
        rollouts: total rollouts per decision (default ``DEFAULT_ROLLOUTS`` when ``ms`` is
            not given either); ``sims`` is the same knob under the name every search agent
            takes (give one of the two).
        ms: wall-clock milliseconds per decision (not reproducible).
        policy: rollout policy, ``"chain"`` (default: the planner's ranking with the chain
            damage estimated from a reservation made when the rollout starts) or
            ``"greedy"`` (pure engine).
        prior: ``"planner"`` (default): the planner's move is the default, kept unless
            another beats it significantly; ``"policy"``: the move of the policy file
            ``path`` (the ``ppo`` agent's argmax) is; ``None``: the best mean, however
            small the gap.
        path: the policy file of ``prior="policy"`` or of a network ``leaf`` (default: the
            ``ppo`` agent's reference policy); refused otherwise.
        z: the margin, in standard errors of the paired differences, by which a move must
            beat the prior's move to be chosen instead.
        engine: where the rollouts run: ``"compiled"`` (numba,
            :mod:`mtrain_env.mexican_train.compiled.rollout`: the same chain policy, proven
            move for move, ~10x faster), ``"python"`` (the pure core: the readable
            reference, and the ``greedy`` policy), or ``"auto"`` (default): compiled when
            numba is installed and the policy is ``chain``, else python with a warning.
            The two engines draw different (equally distributed) determinizations, so
            their choices agree in distribution, not decision for decision.
        threads: threads one decision's compiled rollouts are split over (default 1, at most
            ``MAX_THREADS``): the same rollouts, results and choices as on one thread, in
            less wall time on a machine with idle cores (more budget within an ``ms=``).
            Compiled engine only.
        leaf: how a candidate is valued on a world: ``"rollout"`` (default: played to the
            round's end by ``policy``), ``"policy"`` (played to the round's end with the
            seat's later choices made by the self-play network ``path``, default the
            reference policy, in batches over the worlds; the others play ``policy``,
            ``"chain"``): :mod:`agents.mexican_train.value_leaf`; compiled engine.
        extend: rollouts added to a CLOSE decision (default 0: none), on fresh worlds: one
            where the best challenger's paired t against the default move is within
            :data:`CLOSE_BAND` of ``z``. The default and every challenger with t above
            ``z - CLOSE_BAND`` are played on them, and the gate decides on all the worlds.
            The budget goes where the first search could not tell (a smarter budget than
            doubling every decision). Needs a prior and ``rollouts=``/``sims=`` (not ``ms=``).
    """

    name = "mc"

    def __init__(
        self,
        seed: int | None = None,
        rollouts: int | None = None,
        ms: float | None = None,
        policy: str = "chain",
        prior: str | None = "planner",
        z: float = 1.0,
        engine: str = "auto",
        sims: int | None = None,
        path: str | None = None,
        threads: int = 1,
        leaf: str = "rollout",
        extend: int = 0,
    ) -> None:
        super().__init__(seed)
        rollouts = self._check_budget(rollouts, ms, sims)
        self._check_knobs(policy, prior, leaf, extend, path, rollouts, ms)
        self.rollouts = rollouts
        self.ms = ms
        self.policy = policy
        self.extend = extend
        self.prior = prior
        self.leaf = leaf
        self.path = self._resolve_path(prior, leaf, path)
        self.z = z
        self.engine = self._resolve_engine(engine, policy)
        self._check_threads(threads, leaf, self.engine)
        self.threads = threads
        self._rollout_module: Any = compiled_rollouts() if self.engine == "compiled" else None
        self._prior = self._make_prior(prior, self.path)
        self._policies: dict[GameConfig, GreedyPolicy | ChainPolicy] = {}
        self._compiled: dict[GameConfig, tuple[Any, Any, Any]] = {}
        self._leaves: dict[GameConfig, Any] = {}
        self.last_rollouts = 0  #: rollouts run for the last decision
        self.last_samples = 0  #: determinizations used for the last decision
        self.last_values: dict[int, float] = {}  #: mean result per action still in the race

    @staticmethod
    def _check_budget(rollouts: int | None, ms: float | None, sims: int | None) -> int | None:
        """The rollouts per decision (``sims`` is their other name; ``DEFAULT_ROLLOUTS`` when
        no budget is given); ``ValueError`` for both names or a budget out of range."""
        name = "rollouts"
        if sims is not None:
            if rollouts is not None:
                raise ValueError("give rollouts or sims (the same budget), not both")
            name, rollouts = "sims", sims
        if rollouts is None and ms is None:
            rollouts = DEFAULT_ROLLOUTS
        if rollouts is not None and rollouts < 1:
            raise ValueError(f"{name} must be >= 1, got {rollouts}")
        if ms is not None and ms <= 0:
            raise ValueError(f"ms must be > 0, got {ms}")
        return rollouts

    @staticmethod
    def _check_knobs(
        policy: str,
        prior: str | None,
        leaf: str,
        extend: int,
        path: str | None,
        rollouts: int | None,
        ms: float | None,
    ) -> None:
        """``ValueError`` naming the first knob out of its range or contradicting another
        (the engine's and the threads' checks come later: they need the resolved engine)."""
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        if prior not in PRIORS:
            raise ValueError(f"prior must be one of {PRIORS}, got {prior!r}")
        if leaf not in LEAVES:
            raise ValueError(f"leaf must be one of {LEAVES}, got {leaf!r}")
        as_int("extend", extend, low=0, numpy=False, error=ValueError)
        if extend and (prior is None or rollouts is None or ms is not None):
            raise ValueError(
                "extend= adds rollouts where the gate against the prior's move is close: it needs "
                f"a prior and a rollouts=/sims= budget without ms=, got prior={prior!r}, ms={ms!r}"
            )
        if leaf in NETWORK_LEAVES and policy not in LEAF_POLICIES:
            raise ValueError(
                f"leaf={leaf!r} reads the network path= (a self-play policy file) with a policy in "
                f"{LEAF_POLICIES} for the other seats; got policy={policy!r}"
            )
        if path is not None and prior not in LEARNED_PRIORS and leaf not in NETWORK_LEAVES:
            raise ValueError(
                f"path= is the network of prior in {LEARNED_PRIORS} or of leaf in {NETWORK_LEAVES}, "
                f"got prior={prior!r}, leaf={leaf!r}"
            )

    @staticmethod
    def _resolve_path(prior: str | None, leaf: str, path: str | None) -> str | None:
        """The network file a learned prior or a network leaf reads (its default when
        ``path`` is None), else None."""
        if prior not in LEARNED_PRIORS and leaf not in NETWORK_LEAVES:
            return None
        if path is None:
            return str(REFERENCE_POLICY)
        return str(path)

    @staticmethod
    def _check_threads(threads: int, leaf: str, engine: str) -> None:
        """``ValueError`` for a thread count out of range, or threads or a network leaf
        without the compiled ``engine``."""
        as_int("threads", threads, low=1, high=MAX_THREADS, numpy=False, error=ValueError)
        if threads > 1 and engine != "compiled":
            raise ValueError(
                f"threads={threads} splits the compiled rollouts; this mc runs engine={engine!r}"
            )
        if leaf in NETWORK_LEAVES and engine != "compiled":
            raise ValueError(f"leaf={leaf!r} runs on the compiled engine, got engine={engine!r}")

    @staticmethod
    def _make_prior(prior: str | None, path: str | None) -> Agent | None:
        """The agent whose move is the default (``prior``; a learned one reads ``path`` on
        first use, in every worker), or None."""
        if prior is None:
            return None
        if prior == "planner":
            return PlannerAgent()
        return PPOAgent(path=path)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the compiled module and its per-config caches (rebuilt on use)."""
        state = self.__dict__.copy()
        state["_rollout_module"] = None
        state["_compiled"] = {}
        state["_leaves"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._compiled = {}
        self._leaves = {}
        if self.engine == "compiled":
            self._rollout_module = compiled_rollouts()
            if self._rollout_module is None:
                raise ValueError(
                    "this mc was saved with engine='compiled', which needs numba (the 'fast' extra)"
                )

    @staticmethod
    def _resolve_engine(engine: str, policy: str) -> str:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        if engine == "python":
            return engine
        if policy not in COMPILED_POLICIES:
            if engine == "compiled":
                raise ValueError(
                    f"engine='compiled' runs the policies {COMPILED_POLICIES} only, got policy={policy!r}"
                )
            return "python"
        if compiled_rollouts() is None:
            if engine == "compiled":
                raise ValueError(
                    f"the compiled engine (policy={policy!r}) needs numba: pip install 'mtrain_env[fast]'"
                )
            warnings.warn(
                "mc: numba is not installed (the 'fast' extra), so rollouts run on the pure-Python "
                "core (~10x slower a decision); pip install 'mtrain_env[fast]' for the compiled ones",
                RuntimeWarning,
                stacklevel=3,
            )
            return "python"
        return "compiled"

    def params(self) -> dict[str, Any]:
        return {
            "rollouts": self.rollouts,
            "ms": self.ms,
            "policy": self.policy,
            "prior": self.prior,
            "z": self.z,
            "engine": self.engine,
            "threads": self.threads,
            **({"path": self.path} if self.path is not None else {}),
            **({"leaf": self.leaf} if self.leaf != "rollout" else {}),
            **({"extend": self.extend} if self.extend else {}),
        }

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._policies.clear()  # fresh chain memos: nothing carries over between games
        if self._prior is not None:
            self._prior.reset()

    def check_game(self, config: GameConfig) -> None:
        """``ValueError`` unless the prior's and the leaves' networks fit ``config``'s table."""
        if self._prior is not None:
            self._prior.check_game(config)
        if self.leaf in NETWORK_LEAVES:
            from agents.mexican_train.value_leaf import check_table, load_value_net

            try:
                check_table(load_value_net(self._network_path(config)), config)
            except FileNotFoundError as err:
                raise ValueError(str(err)) from None

    def _policy(self, game: MexicanTrain) -> GreedyPolicy | ChainPolicy:
        policy = self._policies.get(game.config)
        if policy is None:
            cls = ChainPolicy if self.policy == "chain" else GreedyPolicy
            policy = self._policies[game.config] = cls(game)
        return policy

    def _compiled_game(self, config: GameConfig) -> tuple[Any, Any, Any]:
        """The compiled game of ``config``, its rollout scratch and its rollout thread pool
        (``None`` on one thread); one of each per config."""
        entry = self._compiled.get(config)
        if entry is None:
            from mtrain_env.mexican_train.compiled.game import CompiledMexicanTrain

            module = self._rollout_module
            pool = module.ThreadPool(self.threads) if self.threads > 1 else None
            entry = self._compiled[config] = (CompiledMexicanTrain(config), module.scratch(), pool)
        return entry

    def _network_leaves(self, config: GameConfig) -> Any:
        """The :class:`~agents.mexican_train.value_leaf.ValueLeaves` of ``config`` (one per config)."""
        leaves = self._leaves.get(config)
        if leaves is None:
            from agents.mexican_train.value_leaf import ValueLeaves, load_value_net

            net = load_value_net(self._network_path(config))
            leaves = self._leaves[config] = ValueLeaves(net, config)
        return leaves

    def _network_path(self, config: GameConfig) -> str:
        """The self-play policy file of a network ``leaf`` at ``config``'s table (``path``)."""
        return str(self.path)

    def act(self, decision: Decision) -> int:
        legal = decision.legal_actions
        self.last_rollouts = 0
        self.last_samples = 0
        self.last_values = {}
        if len(legal) == 1:
            return int(legal[0])
        start = time.perf_counter()
        moves = [decision.to_move(a) for a in legal]
        k = len(moves)
        stages = max(1, math.ceil(math.log2(k)))
        if self.rollouts is not None:
            stages = max(1, min(stages, self.rollouts // k))  # every stage affords a rollout each
        base = int(self.rng.integers(1 << 62))
        alive = list(range(k))
        totals = [0.0] * k
        scores: list[list[float]] = [[] for _ in range(k)]  # per candidate, per determinization
        default = -1 if self._prior is None else legal.index(self._prior.act(decision))
        run = (
            self._python_runner(decision, moves)
            if self.engine == "python"
            else self._compiled_runner(decision, moves)
        )
        done = 0  # determinizations every survivor has been scored on

        def play(race: list[int], quota: int | None, deadline: float | None) -> None:
            """The candidates ``race`` on the next determinizations (one stage)."""
            nonlocal done
            for row in run(base, done, race, quota, deadline):
                for i, r in zip(race, row, strict=True):
                    totals[i] += r
                    scores[i].append(r)
                done += 1
                self.last_rollouts += len(race)

        for stage in range(stages):
            quota = None if self.rollouts is None else max(1, self.rollouts // stages // len(alive))
            deadline = None if self.ms is None else start + self.ms * (stage + 1) / stages / 1000.0
            play(alive, quota, deadline)
            if stage < stages - 1:
                # successive halving: the better half goes on (ties: lower action id)
                alive.sort(key=lambda i: (-totals[i], i))
                kept = alive[: (len(alive) + 1) // 2]
                if default >= 0 and default not in kept:
                    kept.append(default)  # the prior's move stays in the race
                alive = sorted(kept)
        if self.extend and default >= 0:
            race = self._close_race(alive, default, scores)
            if race:  # the gate is close: more worlds for the moves still in question
                play(race, max(1, self.extend // len(race)), None)
                alive = race
        self.last_samples = done
        self.last_values = {legal[i]: totals[i] / len(scores[i]) for i in alive}
        best = max(alive, key=lambda i: (totals[i], -i))
        if default >= 0 and best != default and not self._significant(scores[best], scores[default]):
            best = default
        return int(legal[best])

    def last_annotations(self) -> dict[str, Any] | None:
        """The mean rollout result of each action still in the race at the last decision
        (for replays; the seat's own estimate), rounded to 4 decimals; None when the move
        was forced."""
        if not self.last_values:
            return None
        return {"values": {str(a): round(v, 4) for a, v in self.last_values.items()}}

    def _python_world(self, decision: Decision) -> Callable[[int, int], GameState]:
        """``(base, index) ->`` determinization ``index`` of the decision's view on the pure core
        (hidden tiles re-dealt consistently with the public facts)."""
        game = decision.game
        view = decision.view
        return lambda base, index: sample_state(game, view, np.random.default_rng([base, index]))

    def _python_runner(self, decision: Decision, moves: list[int]) -> Runner:
        """One stage on the pure core: a determinization at a time, the clock read before
        each rollout (a determinization cut short by the deadline is dropped)."""
        game = decision.game
        config = game.config
        seat = decision.view.seat
        policy = self._policy(game)
        world = self._python_world(decision)

        def run(base: int, first: int, alive: list[int], quota: int | None, deadline: float | None) -> Rows:
            stage_done = 0
            while quota is None or stage_done < quota:
                root = world(base, first + stage_done)
                results = []
                for i in alive:
                    if deadline is not None and stage_done and time.perf_counter() >= deadline:
                        break
                    s = root.copy()
                    game.apply(s, moves[i])
                    policy.rollout(s)
                    results.append(round_result(config, s, seat))
                if len(results) < len(alive):
                    return  # out of time: the partial determinization is dropped
                yield results
                stage_done += 1
                if deadline is not None and time.perf_counter() >= deadline:
                    return

        return run

    def _compiled_runner(self, decision: Decision, moves: list[int]) -> Runner:
        """One stage on the compiled rollouts: the quota in one call (``rollouts``), or calls of
        :data:`CHUNK` determinizations until the deadline (``ms``; at least one call a stage)."""
        rollout = self._rollout_module
        _, sc, pool = self._compiled_game(decision.game.config)
        leaves = self._network_leaves(decision.game.config) if self.leaf in NETWORK_LEAVES else None

        def rows(det: Any, base: int, first: int, count: int, candidates: list[int]) -> np.ndarray:
            if leaves is not None:
                return leaves.results(det, base, first, count, candidates, sc, pool)
            return rollout.run_rollouts(det, base, first, count, candidates, sc=sc, pool=pool)

        chunk = (VALUE_CHUNK if leaves is not None else CHUNK) * self.threads  # a call under a deadline
        return self._staged_runner(decision, moves, rows, chunk)

    def _staged_runner(self, decision: Decision, moves: list[int], rows: RowsOf, chunk: int) -> Runner:
        """The stage loop of a compiled runner: ``rows(det, base, first, count, candidates)``
        gives the ``(count, k)`` results of determinizations ``first ..`` of the decision's
        :class:`~mtrain_env.mexican_train.compiled.rollout.Determinizer` (made on first use);
        the quota in one call, or ``chunk`` determinizations a call under a deadline."""
        cgame = self._compiled_game(decision.game.config)[0]
        view = decision.view
        det = None

        def run(base: int, first: int, alive: list[int], quota: int | None, deadline: float | None) -> Rows:
            nonlocal det
            if det is None:
                det = self._rollout_module.Determinizer(cgame, view, np.random.default_rng([base, 0, 2]))
            candidates = [moves[i] for i in alive]
            stage_done = 0
            while quota is None or stage_done < quota:
                count = (
                    chunk
                    if quota is None
                    else (quota - stage_done if deadline is None else min(chunk, quota - stage_done))
                )
                yield from rows(det, base, first + stage_done, count, candidates).tolist()
                stage_done += count
                if deadline is not None and time.perf_counter() >= deadline:
                    return

        return run

    def _close_race(self, alive: list[int], default: int, scores: list[list[float]]) -> list[int]:
        """The candidates of a close decision, the default among them (``extend=``); ``[]`` when the
        gate is clear: the best challenger's t is ``>= z + CLOSE_BAND`` (a clear override) or
        none is above ``z - CLOSE_BAND`` (the default clearly holds)."""
        t = {i: paired_t(scores[i], scores[default]) for i in alive if i != default}
        if not t or max(t.values()) >= self.z + CLOSE_BAND:
            return []
        contenders = sorted(i for i, ti in t.items() if ti > self.z - CLOSE_BAND)
        return sorted([default, *contenders]) if contenders else []

    def _significant(self, better: list[float], default: list[float]) -> bool:
        """Whether ``better`` beats ``default`` by more than ``z`` standard errors (paired)."""
        stats = paired_mean_se(better, default)
        return stats is not None and stats[0] > self.z * stats[1]
