"""The ``mtrain`` program: one parser built from each layer's ``register(subparsers)``.

It sits in the top layer so that it may import every layer's commands directly:
:mod:`mtrain_env.cli` (env benchmarks), :mod:`agents.cli` (demo, tournaments) and
:mod:`training.cli` (training).
"""

from __future__ import annotations

import argparse
import re
import sys
import types
from collections.abc import Sequence

from agents import cli as agents_cli
from mtrain_env import cli as env_cli
from mtrain_env.tilegame.argtypes import OneLineErrorParser
from mtrain_env.tilegame.interrupts import run_main
from training import cli as training_cli
from training.selfplay import bench as selfplay_bench
from training.selfplay import cli as selfplay_cli

DESCRIPTION = """\
mtrain plays, benchmarks and trains agents for Mexican Train dominoes (and partnership
block dominoes) on a PettingZoo environment: watch a seeded game, run duplicate-deal
tournaments between agents, train a MaskablePPO policy by self-play, and measure the
environment's speed against OpenSpiel. `mtrain COMMAND --help` describes each command.
"""


DEV_DESCRIPTION = """\
Benchmarks that print the figures of the guide's benchmark page (the long randomized checks
of the rules engines are in tests/, see the contributing guide).
"""


class _CommandListFormatter(argparse.RawDescriptionHelpFormatter):
    """Lists the commands one per line, without argparse's extra ``COMMAND`` line above them."""

    def _format_action(self, action: argparse.Action) -> str:
        if isinstance(action, argparse._SubParsersAction):
            return "".join(self._format_action(choice) for choice in action._get_subactions())
        return super()._format_action(action)


def plain(text: str) -> str:
    """Docstring markup (``code``, :mod:`name`, a closing ``::``) as plain terminal text.

    The commands' descriptions are their modules' docstrings, written for Sphinx.
    """
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)
    text = re.sub(r"::$", ":", text, flags=re.MULTILINE)
    return text.replace("``", "")


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """Give a command's parser, and its own subcommands' (``mtrain replay check``), the
    one-line errors of :class:`OneLineErrorParser` (unless it has its own)."""
    if "error" not in vars(parser):
        parser.error = types.MethodType(OneLineErrorParser.error, parser)  # type: ignore[method-assign]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _one_line_errors(child)


def build_parser() -> argparse.ArgumentParser:
    """The ``mtrain`` parser with every layer's commands."""
    parser = OneLineErrorParser(prog="mtrain", description=DESCRIPTION, formatter_class=_CommandListFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")
    agents_cli.register(sub)
    training_cli.register(sub)
    selfplay_cli.register(sub)
    env_cli.register(sub)
    dev = sub.add_parser(
        "dev",
        help="developer tools: the speed and training-throughput benchmarks",
        description=DEV_DESCRIPTION,
        formatter_class=_CommandListFormatter,
    )
    tools = dev.add_subparsers(dest="tool", required=True, metavar="TOOL", title="tools")
    env_cli.register_dev(tools)
    selfplay_bench.register(tools)
    for command in [*sub.choices.values(), *tools.choices.values()]:
        _one_line_errors(command)
        if command.description:
            command.description = plain(command.description)
    return parser


def command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the command ``args`` were parsed for (``mtrain replay check``'s, not
    ``mtrain``'s): the deepest subcommand chosen."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and action.dest is not None:
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return command_parser(action.choices[name], args)
    return parser


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """``argv`` parsed; a bad command line exits 2 with one line prefixed by its command.

    argparse hands the arguments a subcommand does not know back to the top parser, which
    would refuse them as ``mtrain: unrecognized arguments``: the command they were given to
    refuses them instead (``mtrain play: unrecognized arguments: ...``).
    """
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        command_parser(parser, args).error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``mtrain`` command; its exit status."""
    args = parse(argv)
    name = f"mtrain {args.command}" + (f" {args.tool}" if args.command == "dev" else "")
    return run_main(lambda: args.func(args), name)


if __name__ == "__main__":
    sys.exit(main())
