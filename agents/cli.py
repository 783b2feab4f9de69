"""The agents layer's ``mtrain`` commands: ``demo``, ``bench``, ``benchmark``, ``play``,
``serve``.

Each command's module owns its parser (a ``register(subparsers)`` function); this module
gathers them for :mod:`training.app`, the ``mtrain`` program.
"""

from __future__ import annotations

from typing import Any

from agents import demo, terminal
from agents.tournament import benchmark_cli
from agents.tournament import cli as tournament_cli
from agents.web import cli as web_cli


def register(subparsers: Any) -> None:
    """Add the agents' commands to the ``mtrain`` parser."""
    demo.register(subparsers)
    tournament_cli.register(subparsers)
    benchmark_cli.register(subparsers)
    terminal.register(subparsers)
    web_cli.register(subparsers)
