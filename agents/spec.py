"""Agent specs: the one parser and validator of ``"name[key=value,...]"`` entrants.

Every way of naming an agent (a command line's ``--agents``, a Python string, an
:class:`AgentSpec`, a training config's opponent list) goes through :class:`AgentSpec`
and :func:`check_params`, so a spec the code does not understand (an unknown knob, a
value of the wrong type, a bracket left open) is refused in the same words everywhere,
before the first deal, instead of running the agent with its defaults.

The grammar: ``name`` or ``name[key=value,...]``, where ``name`` is a registered agent or
a ``package.module:ClassName`` path and each value is parsed as JSON when it is JSON, else
kept as the bare string (``mc[sims=64,z=2]``, ``ppo[path=runs/a/policy.npz]``).
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import numpy as np

from agents.base import BaseAgent
from mtrain_env.tilegame import json_text


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
    strings); ``ValueError`` for a malformed spec (a bracket inside the brackets included)
    or a key given twice."""
    m = re.fullmatch(r"\s*([^\[\]\s]+)\s*(?:\[([^\[\]]*)\])?\s*", text)
    if m is None:
        raise ValueError(f"agent spec must look like 'name' or 'name[key=value,...]', got {text!r}")
    params: dict[str, Any] = {}
    if m.group(2) is not None and m.group(2).strip():
        for item in m.group(2).split(","):
            try:
                key, value = parse_param(item)
            except ValueError as err:
                raise ValueError(f"agent spec {text.strip()!r}: {err}") from None
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


@dataclass(frozen=True)
class AgentSpec:
    """One agent to build: a registered name (or ``"module:Class"``), its params and its label.

    ``AgentSpec("mc[sims=64]")`` is ``AgentSpec("mc", {"sims": 64})``: a name carrying
    brackets is parsed, and a key given both there and in ``params`` is an error (never a
    silent winner). The constructor checks only the form; :func:`agents.registry.resolve`
    checks the name and the parameters against the agent's class.

    Args:
        name: key of the game's agent table (``"random"``, ``"mc"``, ...), an import path
            ``"package.module:ClassName"`` of an :class:`~agents.base.BaseAgent` subclass
            (or of a function ``factory(seed=..., **params)`` returning an agent), or a
            whole spec ``"name[key=value,...]"``.
        params: keyword arguments of the agent's constructor (``{"sims": 64}``).
        label: name in tables and files; default :meth:`default_label`.
        agent: an agent object that plays as it is (``name`` is then its label, and it
            takes no ``params``): :meth:`of` builds this spec from an agent.
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None
    agent: BaseAgent[Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValueError(f"an agent spec must be a string, got {self.name!r}")
        if self.agent is not None:
            if not isinstance(self.agent, BaseAgent):
                raise ValueError(f"agent {self.name!r}: not an agents.base.BaseAgent, got {self.agent!r}")
            if self.params:
                raise ValueError(f"agent {self.name!r}: an agent object takes no params (it is built)")
        if not isinstance(self.params, Mapping):
            raise ValueError(f"agent spec {self.name!r}: params must be a mapping, got {self.params!r}")
        name, spec_params = parse_spec(self.name)
        if self.agent is not None and spec_params:
            raise ValueError(f"agent {self.name!r}: an agent object's name takes no [params]")
        for key in self.params:
            if not isinstance(key, str) or not key:
                raise ValueError(f"agent spec {self.name!r}: parameter names must be strings, got {key!r}")
            if key in spec_params:
                raise ValueError(f"agent spec {self.name.strip()!r} gives {key} twice")
        if self.label is not None and (not isinstance(self.label, str) or not self.label.strip()):
            raise ValueError(
                f"agent spec {self.name!r}: a label must be a non-empty string, got {self.label!r}"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "params", {**spec_params, **self.params})

    @classmethod
    def parse(cls, text: str) -> AgentSpec:
        """``"mc"`` or ``"mc[sims=64,z=2]"`` (values parsed as JSON, else strings)."""
        return cls(text)

    @classmethod
    def of(cls, entrant: AgentSpec | str | BaseAgent[Any]) -> AgentSpec:
        """``entrant`` itself, the spec of its text, or the spec of an agent object (labelled
        by its ``name``); anything else is a ``ValueError`` (a bare function or model: make
        it an agent with :func:`agents.custom.from_policy`)."""
        if isinstance(entrant, AgentSpec):
            return entrant
        if isinstance(entrant, str):
            return cls(entrant)
        if isinstance(entrant, BaseAgent):
            return cls(str(entrant.name), agent=entrant)
        hint = "; wrap a policy with agents.from_policy(policy, name=...)" if callable(entrant) else ""
        raise ValueError(f"an agent must be a spec string, an AgentSpec or an agent, got {entrant!r}{hint}")

    def default_label(self) -> str:
        """``name`` or ``name[k=v,...]`` (keys sorted; a path's class name only)."""
        base = self.name.rsplit(":", 1)[-1]
        if not self.params:
            return base
        inner = ",".join(f"{k}={_compact(v)}" for k, v in sorted(self.params.items()))
        return f"{base}[{inner}]"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if not isinstance(value, str) else value


def check_params(cls: type[BaseAgent[Any]], params: Mapping[str, Any]) -> None:
    """``ValueError`` naming the first of ``params`` that ``cls``'s constructor does not take,
    or whose value is not of the type the constructor declares (``mc[sims=abc]``: "sims must
    be an int or None, got 'abc'"): a spec typed on a command line is refused in words, not
    by whatever the constructor's first comparison raises. ``seed`` is the harness's."""
    constructor = getattr(cls, "factory", None) or cls.__init__  # a factory's stand-in: the factory
    signature = inspect.signature(constructor)
    named = {
        key: p
        for key, p in signature.parameters.items()
        if key != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    open_ended = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    hints = _resolved_annotations(constructor)
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
