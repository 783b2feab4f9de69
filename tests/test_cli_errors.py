"""Every ``mtrain`` command answers a bad command line with one line and exit status 2.

(``mtrain train``'s own table of bad options is in ``tests/test_train_cli.py``.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from training.app import main


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["bench", "--agents", "planer"], "--agents"),
        (["bench", "--agents", "planner", "--players", "20"], "--players"),
        (["bench", "--agents", "planner", "--max-pips", "3"], "--max-pips"),
        (["bench", "--agents", "planner", "--rounds", "20"], "--rounds"),
        (["bench", "--agents", "planner", "--hand-size", "40"], "--hand-size"),
        (["bench", "--agents", "planner", "--rules", "nope"], "--rules"),
        (["bench", "--agents", "planner", "--flag", "nope"], "--flag"),
        (["bench", "--agents", "planner", "--flag", "one_tile_opening=maybe"], "--flag"),
        (["bench", "--agents", "planner", "--deals", "-1"], "--deals"),
        (["bench", "--agents", "planner", "--workers", "x"], "--workers"),
        (["bench", "--agents", "mc[rolouts=3]"], "--agents"),
        (["bench", "--agents", "mc", "--agent-param", "xx.rollouts=3"], "--agent-param"),
        (
            ["bench", "--agents", "planner", "greedy", "--lineup", "planner", "foo", "planner", "planner"],
            "--lineup",
        ),
        (["bench", "--game", "block", "--agents", "classic", "--max-pips", "9"], "--max-pips"),
        (["bench", "--game", "block", "--agents", "planner"], "--agents"),
        (["bench", "--game", "chess", "--agents", "planner"], "--game"),
        (["block-bench", "--hands", "-5"], "--hands"),
        (["block-bench", "--agents", "classic", "nobody"], "--agents"),
        (["block-demo", "--rules", "x"], "--rules"),
        (["block-demo", "--players", "3"], "--players"),
        (["bench-speed", "--seconds", "-1"], "--seconds"),
        (["bench-speed", "--slices", "0"], "--slices"),
        (["block-crosscheck", "--hands", "-1"], "--hands"),
        (["demo", "--agents", "random", "planer"], "--agents"),
        (["demo", "--bogus"], "unrecognized arguments: --bogus"),
        (["nosuchcommand"], "nosuchcommand"),
    ],
)
def test_bad_command_lines_get_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], names: str
) -> None:
    out = tmp_path / "out"
    if argv[0] in ("bench", "demo"):
        argv = [*argv, "--out", str(out)]
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(argv))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert names in err and err.startswith("mtrain") and len(err.strip().splitlines()) == 1, err
    assert not out.exists()  # nothing written
