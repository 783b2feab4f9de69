"""``mtrain play``: play seat 0 yourself in the terminal, against agents in the other seats.

The table is you plus one seat per agent named (``--agents planner planner planner``: four
players), so there is no ``--players``.

Example::

    mtrain play --agents planner planner planner --seed 7
    mtrain play --agents mc greedy --max-pips 9 --session --save runs/play/my-game.jsonl
    mtrain play --game block --agents classic classic classic

You see the table as your seat sees it (the env's text render with YOUR hand only: the
other hands stay hidden, R15), your legal moves numbered (drawing and passing are
numbered options too; a draw or a pass that is your only legal move is played for you, and
said in one line), and each opponent's move as it is made. Type a number and Enter;
anything else asks again; ``q`` (or end of input) quits. Each round's result, the
session's scores at the end, and the whole game as a replay file (``--save``; also when
you quit: the game so far) are shown; ``mtrain replay show FILE`` plays it back.

The opponents are moved by THE play loop, :func:`agents.play.play_until`, which hands the
turn back whenever seat 0 is to play.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from agents.play import AgentError, Step, play_until
from agents.registry import make_agent
from agents.tournament.cli import OptionError, add_game_options, checked_game
from agents.tournament.harness import AgentSpec, checked_agent
from mtrain_env.cli import int_at_least, output_problem
from mtrain_env.replay import ReplayRecorder, describe_move, make_env, published_round_result, write_replay
from mtrain_env.replay_view import round_lines, table_text

#: the seat the human plays
HUMAN = 0
QUIT_WORDS = ("q", "quit", "exit")


def register(subparsers: Any) -> None:
    """Add the ``play`` subcommand to the ``mtrain`` parser."""
    p = subparsers.add_parser(
        "play",
        help="play seat 0 yourself in the terminal against agents (the game is saved as a replay)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help="the agents of seats 1, 2, ...: registered names or specs, e.g. 'champion[sims=100]'",
    )
    p.add_argument(
        "--seed",
        type=int_at_least(0),
        default=None,
        help="the deal's seed (default: a random one, shown when the game ends: it deals every hand)",
    )
    p.add_argument(
        "--save", default=None, metavar="FILE", help="replay file (default runs/play/seed<S>.jsonl)"
    )
    add_game_options(p, players=False)
    p.add_argument("--players", nargs="?", action=PlayersFromAgents, help=argparse.SUPPRESS)
    p.set_defaults(func=play_command)


#: where ``play``'s table size comes from, said by every error about it
TABLE_SIZE = "the table is you (seat 0) plus one seat per agent of --agents"


class PlayersFromAgents(argparse.Action):
    """``--players`` given to ``play`` (``bench`` has it): refused, saying where the table
    size comes from instead (and how many agents make the table asked for)."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: str | None = None
    ) -> None:
        text = str(values or "")
        wanted = f" (name {int(text) - 1} for {text} players)" if text.isdigit() and int(text) > 1 else ""
        parser.error(f"--players: not an option of play; {TABLE_SIZE}{wanted}")


def play_command(args: argparse.Namespace) -> int:
    """Check the options, then play (exit status 2 and one line on a bad option)."""
    args.players = 1 + len(args.agents)
    try:
        try:
            config = checked_game(args)
        except OptionError as err:  # the game's seat count is the agents' count here
            if err.option != "--players":
                raise
            raise OptionError("--agents", f"{err}; {TABLE_SIZE}, {len(args.agents)} here") from None
        for text in args.agents:  # names and parameters, then what each reads against the table
            try:
                checked_agent(AgentSpec.parse(text), config)
            except ValueError as err:
                raise OptionError("--agents", str(err)) from None
    except OptionError as err:
        print(f"mtrain play: {err.option}: {err}", file=sys.stderr)
        return 2
    # 63 bits: a deal the player cannot find again by trying seeds against its own hand
    seed = args.seed if args.seed is not None else secrets.randbits(63)
    save_text = args.save if args.save is not None else str(Path("runs") / "play" / f"seed{seed}.jsonl")
    save = Path(save_text)
    problem = output_problem(save_text)  # before Path(): Path("") would be the current directory
    if problem is not None:  # found now, not after the game
        print(f"mtrain play: --save: {problem}", file=sys.stderr)
        return 2
    session = TerminalSession(
        args.game, config.to_dict(), args.agents, seed, seed_given=args.seed is not None
    )
    return session.run(save)


class TerminalSession:
    """One game of a human at seat 0 against ``opponents`` (agent names or specs such as
    ``"mc[sims=100]"``), reading ``stdin``."""

    def __init__(
        self,
        game: str,
        config: dict[str, Any],
        opponents: list[str],
        seed: int,
        read: Callable[[str], str] = input,
        out: TextIO | None = None,
        seed_given: bool = True,
    ) -> None:
        self.env = make_env(game, config)
        self.game = game
        self.seed = seed
        self.seed_given = seed_given  #: the player chose the seed (else it is shown at the end only)
        self.read = read
        self.out = out
        seeds = np.random.SeedSequence(seed).generate_state(len(opponents))
        specs = [AgentSpec.parse(text) for text in opponents]
        self.agents: list[Any] = [None] + [
            make_agent(spec.name, seed=int(s), game=game, **spec.params)
            for spec, s in zip(specs, seeds, strict=True)
        ]
        self.names = ["human", *opponents]
        self.rounds: list[dict[str, Any]] = []

    def say(self, text: str = "") -> None:
        print(text, file=self.out or sys.stdout, flush=True)

    def run(self, save: Path) -> int:
        """Play to the end (or until the human quits); save the replay; exit status 0 (1 if
        an agent failed: its traceback and seat are shown, the game so far is saved; 130 on
        Ctrl-C or SIGTERM, which quit as ``q`` does: the game so far is saved)."""
        env = self.env
        env.reset(seed=self.seed)
        recorder = ReplayRecorder(env, self.seed, self.names)
        c = env.config
        # a seed the player did not choose is shown at the end only: it deals every hand again
        deal = f"seed {self.seed}" if self.seed_given else "a random deal (its seed is shown at the end)"
        self.say(f"mtrain play: you are player_{HUMAN}; {deal}")
        self.say(
            "seats: "
            + ", ".join(f"player_{i} {'(you)' if i == HUMAN else n}" for i, n in enumerate(self.names))
        )
        if self.game == "mexican_train":
            self.say(f"Mexican Train, double-{c.max_pips}, {c.rules} rules, {c.rounds} round(s)")

        def observe(step: Step) -> None:
            recorder(step)
            move = describe_move(env, step.seat, step.action)
            self.say(f"  player_{step.seat} ({self.names[step.seat]}): {move}")
            if step.round_result is not None:
                self.show_round(step.round_result)

        quit_early = interrupted = False
        try:
            while True:
                try:
                    record = play_until(env, self.agents, observe)
                except AgentError as err:
                    write_replay(save, recorder.replay)
                    print(err.agent_traceback() + f"mtrain play: {err}", file=sys.stderr)
                    self.say(f"the game stopped; the game so far is saved: {save}")
                    return 1
                if record.episode_over:
                    break
                forced = self.forced_move()
                action = forced if forced is not None else self.ask()
                if action is None:
                    quit_early = True
                    break
                env.step(action)
                recorder.record(HUMAN, action)
                why = " (your only move: played for you)" if forced is not None else ""
                self.say(f"  player_{HUMAN} (you): {describe_move(env, HUMAN, action)}{why}")
                result = published_round_result(env)
                if result is not None:
                    self.show_round(result)
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (run_main raises it): a quit
            quit_early = interrupted = True
            self.say()
        write_replay(save, recorder.replay)
        if quit_early:
            self.say(f"you quit; the game so far is saved: {save}")
        else:
            self.show_final(recorder.replay.final)
            self.say(f"game over; replay saved: {save}  (mtrain replay show {save})")
        if not self.seed_given:
            self.say(f"the deal's seed: {self.seed}")
        return 130 if interrupted else 0

    def forced_move(self) -> int | None:
        """The human's move when there is nothing to choose: the draw or the pass of R16 as
        the only legal action (the env asks for it all the same, R15); asking would only make
        the player type ``1``."""
        legal = self.env.legal_actions()
        if len(legal) == 1 and self.env.unwrapped.decode_action(int(legal[0])).kind in ("draw", "pass"):
            return int(legal[0])
        return None

    def ask(self) -> int | None:
        """The human's action (a legal one), or None to quit."""
        env = self.env
        legal = env.legal_actions()
        # tiles first, then draw and pass (the codec puts them last)
        self.say()
        self.say(table_text(env, HUMAN))
        self.say(f"your turn (player_{HUMAN}): choose a move")
        for i, action in enumerate(legal, 1):
            self.say(f"  {i:2d}) {describe_move(env, HUMAN, action)}")
        while True:
            try:
                text = self.read(f"your move [1-{len(legal)}, q quits]: ").strip().lower()
            except EOFError:
                return None
            if text in QUIT_WORDS:
                return None
            if text.isascii() and text.isdigit() and 1 <= int(text) <= len(legal):  # not "²"
                return int(legal[int(text) - 1])
            self.say(f"  please type a number from 1 to {len(legal)}, or q to quit (got {text!r})")

    def show_round(self, result: dict[str, Any]) -> None:
        k = len(self.rounds)
        self.rounds.append(result)
        for line in round_lines(k, result):
            self.say(line)
        if len(self.rounds) > 1 or self.env.config.to_dict().get("rounds", 1) > 1:
            totals = [sum(float(r["scores"][p]) for r in self.rounds) for p in range(len(self.names))]
            self.say("   session scores: " + ", ".join(f"player_{p} {x:g}" for p, x in enumerate(totals)))

    def show_final(self, final: dict[str, Any] | None) -> None:
        if final is None:
            return
        scores = final["scores"]
        self.say("final scores: " + ", ".join(f"player_{p} {x:g}" for p, x in enumerate(scores)))
        if self.game == "mexican_train":  # R25: the lowest total wins (the highest with positive scoring)
            sign = -1 if self.env.config.positive_scoring else 1
            place = 1 + sum(1 for x in scores if sign * x < sign * scores[HUMAN])
            self.say(f"you placed {place} of {len(scores)}")
