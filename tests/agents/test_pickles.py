"""A training run's ``state.pkl`` is read by an unpickler that resolves only what a
checkpoint holds (agents/mexican_train/pickles.py): a planted pickle cannot call a function,
import a module or build a foreign object, and every registered agent still round-trips."""

from __future__ import annotations

import io
import os
import pickle
import pickletools
from pathlib import Path
from typing import Any

import pytest

from agents import decision_for, make_agent
from agents.mexican_train import pickles
from agents.registry import agent_names
from mtrain_env.mexican_train import raw_env


def _calls(module: str, name: str, *args: Any) -> bytes:
    """A protocol-2 pickle that calls ``module.name(*args)`` (GLOBAL + REDUCE), as an attacker
    would write one: no object of that kind need exist here."""
    out = io.BytesIO()
    out.write(b"\x80\x02c" + f"{module}\n{name}\n".encode())
    out.write(pickle.dumps(args, protocol=2)[2:-1])  # the argument tuple, without PROTO and STOP
    out.write(b"R.")
    pickletools.dis(out.getvalue(), out=io.StringIO())  # a well-formed pickle
    return out.getvalue()


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("os", "system"),
        ("posix", "system"),
        ("builtins", "eval"),
        ("__builtin__", "eval"),  # the Python 2 name pickle maps to builtins
        ("subprocess", "getoutput"),
        ("training.app", "main"),  # a function of ours
        ("agents.mexican_train.pickles", "os.system"),  # a dotted name reaching through a module
        ("agents.play", "time"),  # a module object held by one of ours
        ("pathlib", "Path"),  # a class, but not ours and not an agent
        ("antigravity", "geohash"),  # a module nobody imported: importing it would run it
    ],
)
def test_a_planted_pickle_is_refused_before_it_calls_anything(tmp_path: Path, module: str, name: str) -> None:
    marker = tmp_path / "ran"
    blob = _calls(module, name, f"touch {marker}")
    with pytest.raises(pickle.UnpicklingError, match="which a checkpoint never holds"):
        pickles.loads(blob)
    assert not marker.exists()
    assert pickle.loads(_calls("os", "getcwd")) == os.getcwd()  # the same bytes would have run


@pytest.mark.parametrize("name", agent_names("mexican_train"))
def test_every_registered_agent_round_trips_after_playing(name: str) -> None:
    """The single-agent env pickles its seated opponents into the run's state: every agent
    the registry names comes back (after a decision has filled its caches)."""
    agent = make_agent(name, seed=3)
    env = raw_env(num_players=4)
    env.reset(seed=1)
    agent.reset(1)
    if not getattr(agent, "cheats", False):
        agent.act(decision_for(env, env.agent_selection))
    back = pickles.loads(pickle.dumps(agent))
    assert type(back) is type(agent) and back.params() == agent.params()


def test_a_plugin_agent_of_an_imported_module_round_trips() -> None:
    """``--heuristics module:Class`` seats a plugin agent; the run imported its module, so
    its class resolves (a class of a module not imported is refused above)."""
    from tests.tournament.test_tournament import AlwaysPass

    back = pickles.loads(pickle.dumps({1: AlwaysPass()}))
    assert isinstance(back[1], AlwaysPass)
