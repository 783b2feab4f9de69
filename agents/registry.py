"""Agents by name, one table per game.

Built-in agents are listed as ``"module:Class"`` paths and imported on first use, so
looking up ``random`` never imports torch (``ppo``) and no agent module has to import
this one to register itself. :func:`register` adds an agent class at run time (tests,
plugins); ``"module:Class"`` names an agent outside the tables (a tournament entrant).
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
import typing
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

import numpy as np

from agents.base import BaseAgent
from mtrain_env.tilegame import json_text

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
        "mc_infer": "agents.mexican_train.mc_infer:MCInferAgent",
        "mc_student": "agents.mexican_train.mc_student:MCStudentAgent",
        "ismcts": "agents.mexican_train.ismcts:ISMCTSAgent",
        "champion": "agents.mexican_train.champion:ChampionAgent",
        "champion_policy": "agents.mexican_train.champion:ChampionPolicyAgent",
        "ismcts_puct": "agents.mexican_train.puct:PUCTAgent",
        "ismcts_puct_policy": "agents.mexican_train.puct:PUCTPolicyAgent",
        # CHEATS (perfect information): the headroom bound, never a fair baseline
        "oracle": "agents.mexican_train.oracle:OracleAgent",
        "oracle_champion": "agents.mexican_train.oracle_champion:OracleChampionAgent",
        "ppo": "agents.mexican_train.ppo:PPOAgent",
        "openspiel_ismcts": "agents.mexican_train.openspiel_ismcts:OpenSpielISMCTSAgent",
    },
    "block": {
        "random": "agents.block.simple:RandomBlockAgent",
        "greedy": "agents.block.simple:GreedyBlockAgent",
        "classic": "agents.block.classic:ClassicBlockAgent",
    },
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
    """The agent class at ``"package.module:ClassName"``; ``ValueError`` if it is not one."""
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
    if not (isinstance(cls, type) and issubclass(cls, BaseAgent)):
        raise ValueError(f"{path!r} does not name an agents.base.BaseAgent subclass")
    return cls


def parse_param(item: str) -> tuple[str, Any]:
    """``"key=value"`` -> ``(key, value)`` with the value parsed as JSON when it is JSON."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"an agent parameter must be key=value, got {item!r}")
    raw = raw.strip()
    try:
        value = json_text.loads(raw)
    except ValueError:  # a bare word: the string itself
        value = raw
    return key, value


def parse_spec(text: str) -> tuple[str, dict[str, Any]]:
    """``"mc"`` or ``"mc[sims=64,z=2]"`` -> ``(name, params)`` (values parsed as JSON, else
    strings); ``ValueError`` for a malformed spec or a key given twice."""
    m = re.fullmatch(r"\s*([^\[\]\s]+)\s*(?:\[(.*)\])?\s*", text)
    if m is None:
        raise ValueError(f"agent spec must look like 'name' or 'name[key=value,...]', got {text!r}")
    params: dict[str, Any] = {}
    if m.group(2):
        for item in m.group(2).split(","):
            key, value = parse_param(item)
            if key in params:
                raise ValueError(f"agent spec {text.strip()!r} gives {key} twice")
            params[key] = value
    return m.group(1), params


def split_specs(text: str) -> list[str]:
    """Comma-separated agent specs, commas inside ``[...]`` kept: ``"mc[sims=8,z=2],greedy"``
    -> ``["mc[sims=8,z=2]", "greedy"]`` (empty items dropped)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


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
        raise ValueError(f"unknown agent {name!r} ({game}); known: {agent_names(game)}")
    if isinstance(entry, str):
        entry = table[name] = import_class(entry)
    return entry


def make_agent(name: str, seed: int | None = None, game: str = DEFAULT_GAME, **params: Any) -> Any:
    """Instantiate an agent of ``game`` by name or spec (``"mc[sims=64]"``, see
    :func:`parse_spec`; keyword ``params`` win over the spec's) with its parameters."""
    base, spec_params = parse_spec(name) if "[" in name else (name, {})
    return agent_class(base, game)(seed=seed, **{**spec_params, **params})


def check_params(cls: type[BaseAgent[Any]], params: Mapping[str, Any]) -> None:
    """``ValueError`` naming the first of ``params`` that ``cls``'s constructor does not take,
    or whose value is not of the type the constructor declares (``mc[sims=abc]``: "sims must
    be an int or None, got 'abc'"): a spec typed on a command line is refused in words, not
    by whatever the constructor's first comparison raises. ``seed`` is the harness's."""
    signature = inspect.signature(cls.__init__)
    named = {
        key: p
        for key, p in signature.parameters.items()
        if key != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    open_ended = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    hints = _resolved_annotations(cls.__init__)
    for key, value in params.items():
        if key == "seed":
            raise ValueError(
                f"{cls.name}: seed is set by the harness (its --seed and the deal), not a parameter"
            )
        if key not in named:
            if open_ended:
                continue
            known = ", ".join(k for k in named if k != "seed") or "none"
            raise ValueError(f"{cls.name} has no parameter {key!r}; its parameters: {known}")
        hint = hints.get(key)
        if hint is not None and not _fits(value, hint):
            raise ValueError(f"{cls.name}: {key} must be {_describe(hint)}, got {value!r}")


def _resolved_annotations(function: Any) -> dict[str, Any]:
    """``function``'s annotations resolved one by one in its module; one that does not
    resolve at run time (a name imported for type checking only) is left out, not fatal."""
    hints: dict[str, Any] = {}
    for key, annotation in getattr(function, "__annotations__", {}).items():
        holder = types.SimpleNamespace(__annotations__={key: annotation})
        try:
            hints[key] = typing.get_type_hints(holder, globalns=function.__globals__)[key]
        except NameError:
            continue
    return hints


def _fits(value: Any, hint: Any) -> bool:
    """Whether a parsed spec value can be passed as ``hint`` (unions, None, int, float, str,
    bool and paths are checked; anything else is left to the constructor)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(_fits(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:  # numpy's integers too (specs built in Python)
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, (str, PurePath))  # a constructor typed ``str`` takes a path too
    if isinstance(hint, type) and issubclass(hint, PurePath):
        return isinstance(value, (str, PurePath))
    return True


def _describe(hint: Any) -> str:
    """``int | None`` -> "an int or None" (the words of :func:`check_params`'s errors)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        words = list(dict.fromkeys(_describe(arm) for arm in typing.get_args(hint)))
        return " or ".join(words)
    names = {type(None): "None", bool: "true or false", int: "an int", float: "a number", str: "a string"}
    if hint in names:
        return names[hint]
    if isinstance(hint, type) and issubclass(hint, PurePath):
        return "a string"  # a path
    return getattr(hint, "__name__", str(hint))
