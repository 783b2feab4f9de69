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

Deterministic given the seed and ``sims=`` (not ``ms=``); reads only the seat's view and
its own observation (the harness's leak check covers it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.mexican_train.base import Agent, Decision, table_file
from agents.mexican_train.mc import MCAgent
from agents.mexican_train.ppo import REFERENCE_POLICY, PPOAgent
from mtrain_env.mexican_train.core.config import GameConfig

__all__ = ["DEFAULT_SIMS", "TABLE_POLICIES", "ChampionAgent", "ChampionPolicyAgent", "table_policy"]

_POLICIES = Path(__file__).resolve().parent.parent / "policies"

#: the shipped network per table ``(players, N of double-N)``: ``graph`` self-play runs
#: (the research record has how each was trained); 4 players is the reference policy
TABLE_POLICIES: dict[tuple[int, int], Path] = {
    (2, 12): _POLICIES / "graph_2p.npz",
    (3, 12): _POLICIES / "graph_3p.npz",
    (4, 12): REFERENCE_POLICY,
    (5, 12): _POLICIES / "graph_5p.npz",
    (6, 12): _POLICIES / "graph_6p.npz",
    (7, 12): _POLICIES / "graph_7p.npz",
    (8, 12): _POLICIES / "graph_8p.npz",
}

#: rollouts per decision by default (the guide's benchmarks page has the time and strength
#: of each budget); ``extend=N`` spends N more rollouts on the close decisions only
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


class ChampionAgent(MCAgent):
    """``mc`` with the table's network as its prior and its rollouts (module docstring).

    Args:
        seed: seeds the worlds.
        sims: rollouts per decision (default :data:`DEFAULT_SIMS`); ``ms``: wall-clock
            milliseconds instead (not reproducible); with both, whichever ends first.
        z: the margin, in standard errors, by which a move must beat the network's move.
        path: a self-play policy file (default: the table's shipped one).
        extend: rollouts added to a decision whose gate against the network's move is
            close (default 0: none): ``mc``'s ``extend=``.
        threads: threads one decision's worlds are split over (default 1): the same
            rollouts and choices in less wall time on idle cores (``mc``'s ``threads=``).
    """

    name = "champion"

    def __init__(
        self,
        seed: int | None = None,
        sims: int | None = None,
        ms: float | None = None,
        z: float = 1.0,
        path: str | Path | None = None,
        extend: int = 0,
        threads: int = 1,
    ) -> None:
        if sims is None and ms is None:
            sims = DEFAULT_SIMS
        super().__init__(
            seed,
            sims=sims,
            ms=ms,
            z=z,
            prior="policy",
            leaf="policy",
            engine="compiled",
            path=str(REFERENCE_POLICY if path is None else path),  # replaced per table below
            extend=extend,
            threads=threads,
        )
        self.table_path = None if path is None else str(path)
        self._prior = ChampionPolicyAgent(path=self.table_path)

    def params(self) -> dict[str, Any]:
        knobs = {"sims": self.rollouts, "ms": self.ms, "z": self.z, "path": self.table_path}
        extend = {"extend": self.extend} if self.extend else {}
        threads = {"threads": self.threads} if self.threads > 1 else {}
        return {**knobs, **extend, **threads}

    def _network_path(self, config: GameConfig) -> str:
        return self.table_path or str(table_policy(config))
