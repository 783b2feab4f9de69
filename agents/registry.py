"""Agents by name, one table per game.

Built-in agents are listed as ``"module:Class"`` paths and imported on first use, so
looking up ``random`` never imports torch (``ppo``) and no agent module has to import
this one to register itself. :func:`register` adds an agent class at run time (tests,
plugins); ``"module:Class"`` names an agent outside the tables (a tournament entrant).
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Mapping
from typing import Any

from agents.base import BaseAgent
from agents.spec import AgentSpec, check_params, parse_param, parse_spec, split_specs

__all__ = [
    "DEFAULT_GAME",
    "GAMES",
    "REGISTRIES",
    "AgentSpec",
    "agent_class",
    "agent_names",
    "check_params",
    "import_class",
    "make_agent",
    "parse_param",
    "parse_spec",
    "register",
    "resolve",
    "split_specs",
]

#: the games agents exist for (keys of :data:`REGISTRIES`)
GAMES: tuple[str, ...] = ("mexican_train", "block")
#: the default game of every lookup
DEFAULT_GAME = "mexican_train"

#: game -> agent name -> class, or its ``"module:Class"`` path until first use
REGISTRIES: dict[str, dict[str, type[BaseAgent[Any]] | str]] = {
    "mexican_train": {
        "random": "agents.mexican_train.random_agent:RandomAgent",
        "greedy": "agents.mexican_train.greedy:GreedyAgent",
        "planner": "agents.mexican_train.planner:PlannerAgent",
        "mc": "agents.mexican_train.mc:MCAgent",
        "ismcts": "agents.mexican_train.ismcts:ISMCTSAgent",
        "champion": "agents.mexican_train.champion:ChampionAgent",
        "champion_policy": "agents.mexican_train.champion:ChampionPolicyAgent",
        # CHEATS (perfect information): the headroom bound, never a fair baseline
        "oracle": "agents.mexican_train.oracle:OracleAgent",
        "ppo": "agents.mexican_train.ppo:PPOAgent",
        "openspiel_ismcts": "agents.mexican_train.openspiel_ismcts:OpenSpielISMCTSAgent",
    },
    "block": {
        "random": "agents.block.simple:RandomBlockAgent",
        "greedy": "agents.block.simple:GreedyBlockAgent",
        "classic": "agents.block.classic:ClassicBlockAgent",
    },
}


#: names people try for an agent that exists under another name -> the one-line pointer
POINTERS: dict[str, str] = {
    "sb3": "a stable-baselines3 / sb3-contrib model saved with model.save() plays as ppo[path=MODEL.zip]",
}


def _table(game: str) -> dict[str, type[BaseAgent[Any]] | str]:
    if game not in REGISTRIES:
        raise ValueError(f"game must be one of {GAMES}, got {game!r}")
    return REGISTRIES[game]


def agent_names(game: str = DEFAULT_GAME) -> list[str]:
    """The registered agent names of ``game``, sorted."""
    return sorted(_table(game))


def register(cls: type[BaseAgent[Any]], game: str = DEFAULT_GAME) -> type[BaseAgent[Any]]:
    """Add an agent class to ``game``'s table under ``cls.name`` (usable as a decorator)."""
    _table(game)[cls.name] = cls
    return cls


def import_class(path: str) -> type[BaseAgent[Any]]:
    """The agent class at ``"package.module:ClassName"``, or the class of the agents a
    factory function ``"package.module:function"`` returns (``function(**params)``, with
    ``seed=`` too if it takes one); ``ValueError`` if the path names neither."""
    module_name, sep, cls_name = path.partition(":")
    if not sep:
        raise ValueError(f"an agent path must look like 'package.module:ClassName', got {path!r}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        parts = module_name.split(".")
        if err.name not in {".".join(parts[: i + 1]) for i in range(len(parts))}:
            raise  # the module exists but needs something missing: its own error says what
        raise ValueError(f"{path!r}: no module named {err.name!r} (is it on the Python path?)") from None
    cls = getattr(module, cls_name, None)
    if isinstance(cls, types.FunctionType):
        return _factory_class(cls, path)
    if not (isinstance(cls, type) and issubclass(cls, BaseAgent)):
        raise ValueError(f"{path!r} does not name an agents.base.BaseAgent subclass or a factory function")
    return cls


def _factory_class(factory: types.FunctionType, path: str) -> type[BaseAgent[Any]]:
    """A stand-in class whose construction calls ``factory`` (checked like a constructor:
    :func:`~agents.spec.check_params` reads the factory's signature)."""
    signature = inspect.signature(factory)
    takes_seed = "seed" in signature.parameters

    def build(cls: type, seed: int | None = None, **params: Any) -> BaseAgent[Any]:
        arguments = {"seed": seed, **params} if takes_seed else params
        try:
            signature.bind(**arguments)
        except TypeError as err:  # a function that is not a factory of keyword parameters
            raise ValueError(f"{path!r} cannot be called as a factory: {err}") from None
        agent = factory(**arguments)
        if not isinstance(agent, BaseAgent):
            raise ValueError(
                f"{path!r} returned {type(agent).__name__}, not an agent (agents.from_policy makes one)"
            )
        if seed is not None:
            agent.reset(seed)
        return agent

    namespace = {"__new__": build, "name": factory.__name__, "factory": staticmethod(factory)}
    return type(factory.__name__, (_FactoryAgent,), namespace)


class _FactoryAgent(BaseAgent[Any]):
    """The base of :func:`_factory_class`'s stand-ins (never an instance itself)."""

    factory: Any

    def act(self, decision: Any) -> int:  # pragma: no cover - instances are the factory's agents
        raise NotImplementedError


def agent_class(name: str, game: str = DEFAULT_GAME) -> type[BaseAgent[Any]]:
    """The class of a registered agent name or of a ``"module:Class"`` path (a spec such as
    ``"mc[sims=64]"``: its agent's class; :func:`make_agent` applies the parameters).

    Raises ``ValueError`` naming the known agents of ``game`` for an unknown name.
    """
    if "[" in name:
        name = parse_spec(name)[0]
    table = _table(game)
    entry = table.get(name)
    if entry is None:
        if ":" in name:
            return import_class(name)
        if name in POINTERS and game == DEFAULT_GAME:
            raise ValueError(f"unknown agent {name!r}: {POINTERS[name]}")
        raise ValueError(f"unknown agent {name!r} ({game}); known: {agent_names(game)}")
    if isinstance(entry, str):
        entry = table[name] = import_class(entry)
    return entry


def resolve(
    entrant: AgentSpec | str, game: str = DEFAULT_GAME, params: Mapping[str, Any] | None = None
) -> tuple[type[BaseAgent[Any]], dict[str, Any]]:
    """The class and checked constructor parameters of ``entrant`` (a spec string or an
    :class:`~agents.spec.AgentSpec`; ``params`` override its own): ``ValueError`` for an
    unknown name, a parameter its class does not take, or a value of the wrong type
    (:func:`~agents.spec.check_params`). The one check every entry point shares."""
    spec = AgentSpec.of(entrant)
    cls = agent_class(spec.name, game)
    merged = {**spec.params, **(params or {})}
    check_params(cls, merged)
    return cls, merged


def make_agent(
    name: AgentSpec | str, seed: int | None = None, game: str = DEFAULT_GAME, **params: Any
) -> Any:
    """Instantiate an agent of ``game`` by name or spec (``"mc[sims=64]"``; keyword
    ``params`` win over the spec's), its parameters checked by :func:`resolve`."""
    cls, merged = resolve(name, game, params)
    return cls(seed=seed, **merged)
