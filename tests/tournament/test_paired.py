"""``agents.tournament.paired``: runs on the same deals, compared deal by deal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.tournament import paired
from agents.tournament.stats import mean_ci, ratio_ci

HEADER = "deal,lineup,rotation,round,seat,agent,deal_seed,penalty\n"


def _run(path: Path, agent: str, penalties: dict[int, tuple[int, int]], seed: int = 1000) -> Path:
    """A run whose lone ``agent`` scores ``mine`` and each of 3 planners ``theirs`` per deal
    (deal seeds ``seed + deal``)."""
    path.mkdir()
    lines = [HEADER]
    for deal, (mine, theirs) in penalties.items():
        for seat in range(4):
            who, pen = (agent, mine) if seat == 0 else ("planner", theirs)
            lines.append(f"{deal},0,0,0,{seat},{who},{seed + deal},{pen}\n")
    (path / "results.csv").write_text("".join(lines))
    return path


def test_gains_and_the_paired_difference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path / "a", "mc_infer", {0: (10, 30), 1: (20, 30), 2: (5, 20)})  # gains 20, 10, 15
    b = _run(tmp_path / "b", "mc", {0: (14, 30), 1: (22, 30), 2: (9, 20)})  # gains 16, 8, 11
    assert paired.deal_gains(a) == ("mc_infer", {(0, "1000"): 20.0, (1, "1001"): 10.0, (2, "1002"): 15.0})
    assert paired.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "3 deals in both runs" in out
    assert "mc_infer - mc: 3.33 [" in out  # differences 4, 2, 4


def test_also_pools_the_deals_of_another_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path / "a", "champion", {0: (10, 30), 1: (20, 30)})  # gains 20, 10
    b = _run(tmp_path / "b", "mc", {0: (14, 30), 1: (22, 30)})  # gains 16, 8: differences 4, 2
    a2 = _run(tmp_path / "a2", "champion", {0: (5, 20), 1: (9, 10)}, seed=5000)  # gains 15, 1
    b2 = _run(tmp_path / "b2", "mc", {0: (9, 20), 1: (3, 10), 2: (1, 1)}, seed=5000)  # 11, 7 (deal 2 alone)
    assert paired.deal_gains(a2)[1].keys() == {(0, "5000"), (1, "5001")}
    assert paired.main([str(a), str(b), "--also", str(a2), str(b2)]) == 0
    out = capsys.readouterr().out
    assert "4 deals in both runs of 2 pairs" in out
    assert f"champion - mc: {mean_ci([4.0, 2.0, 4.0, -6.0])}  (paired by deal)" in out
    assert f"champion                     {mean_ci([20.0, 10.0, 15.0, 1.0])}" in out
    # a pair of other agents is refused, naming the pair
    other = _run(tmp_path / "o", "oracle", {0: (1, 20), 1: (1, 10)}, seed=5000)
    with pytest.raises(SystemExit) as err:
        paired.main([str(a), str(b), "--also", str(other), str(b2)])
    assert err.value.code == 2
    assert "compares oracle with mc, not champion with mc" in capsys.readouterr().err
    # the same deals twice would shrink the interval for nothing
    with pytest.raises(SystemExit) as err:
        paired.main([str(a), str(b), "--also", str(a), str(b)])
    assert err.value.code == 2
    assert "deals already counted" in capsys.readouterr().err
    # a pair on different deals is refused too
    with pytest.raises(SystemExit) as err:
        paired.main([str(a), str(b), "--also", str(a2), str(b)])
    assert err.value.code == 2
    assert "share fewer than 2 deals" in capsys.readouterr().err


def test_runs_on_other_deals_are_refused(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", "x", {0: (1, 2), 1: (1, 2)})
    b = tmp_path / "b"
    b.mkdir()
    (b / "results.csv").write_text(HEADER + "0,0,0,0,0,y,7,1\n0,0,0,0,1,planner,7,2\n0,0,0,0,2,planner,7,2\n")
    with pytest.raises(SystemExit) as err:
        paired.main([str(a), str(b)])
    assert err.value.code == 2
    with pytest.raises(SystemExit):
        paired.main([str(a), str(tmp_path / "missing")])


def test_a_run_with_no_game_yet_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path / "a", "x", {0: (1, 2), 1: (1, 2)})
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "results.csv").write_text(HEADER)
    with pytest.raises(SystemExit) as err:
        paired.main([str(empty), str(a)])
    assert err.value.code == 2
    assert "results.csv has no games yet" in capsys.readouterr().err


def test_a_run_of_more_than_one_agent_and_its_baseline_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run seating three agents has no one baseline: the gain would be on an unnamed mix."""
    a = _run(tmp_path / "a", "x", {0: (1, 2), 1: (1, 2)})
    mixed = _run(tmp_path / "mixed", "mc", {0: (1, 2), 1: (3, 2)})
    text = (mixed / "results.csv").read_text()
    (mixed / "results.csv").write_text(text.replace(",2,planner,", ",2,greedy,"))
    with pytest.raises(SystemExit) as err:
        paired.main([str(a), str(mixed)])
    assert err.value.code == 2
    message = capsys.readouterr().err
    assert f"{mixed / 'results.csv'}: seats 3 agents (greedy, mc, planner); a paired run seats one" in message
    assert message.count("\n") == 1


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux's /proc/self/mem")
def test_a_results_file_that_cannot_be_read_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every read fails (a link to ``/proc/self/mem``; ``chmod 000`` for a user who is not
    root): one line naming the file and the reason, exit 2, not a traceback."""
    a = _run(tmp_path / "a", "x", {0: (1, 2)})
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.csv").symlink_to("/proc/self/mem")
    with pytest.raises(SystemExit) as err:
        paired.main([str(broken), str(a)])
    assert err.value.code == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(f"{broken / 'results.csv'}: cannot read it (Input/output error)")
    )


def test_two_player_runs_test_the_first_listed_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At 2 players both agents sit once a table: run.json's first agent is the one tested,
    whatever the names' order ("ppo" sorts after "planner")."""
    run = tmp_path / "two"
    run.mkdir()
    rows = [
        f"{d},0,0,0,{seat},{who},{70 + d},{pen}\n"
        for d in range(3)
        for seat, who, pen in ((0, "ppo", 10), (1, "planner", 25))
    ]
    (run / "results.csv").write_text(HEADER + "".join(rows))
    with pytest.raises(SystemExit) as err:  # no run.json: ambiguous, refused
        paired.main([str(run), str(run)])
    assert err.value.code == 2 and "sit equally often" in capsys.readouterr().err
    for damaged in (b'{"agents": ', b"\xff{}", b"[1]", b'{"agents": [1]}', b'{"agents": 3}'):
        (run / "run.json").write_bytes(damaged)
        with pytest.raises(SystemExit) as err:  # one line naming the file, no traceback
            paired.main([str(run), str(run)])
        message = f"{run / 'run.json'}: not the run.json of a tournament"
        assert err.value.code == 2 and message in capsys.readouterr().err
    agents = [{"label": "ppo"}, {"label": "planner"}]
    (run / "run.json").write_text(json.dumps({"agents": agents}))
    assert paired.deal_gains(run) == ("ppo", {(d, str(70 + d)): 15.0 for d in range(3)})


def test_ratio_ci_is_the_ratio_of_means_with_a_paired_interval() -> None:
    """Against a constant bound the share's interval is the numerator's, scaled; a bound
    that moves with the numerator deal by deal (shared luck) narrows it."""
    num = [4.0, 6.0, 5.0, 9.0, 1.0]
    constant = ratio_ci(num, [10.0] * 5)
    plain = mean_ci(num)
    assert constant.mean == pytest.approx(0.5)
    assert (constant.lo, constant.hi) == pytest.approx((plain.lo / 10, plain.hi / 10))
    shared = ratio_ci(num, [2 * x for x in num])  # the bound is twice A on every deal
    assert shared.mean == pytest.approx(0.5) and shared.hi - shared.lo == pytest.approx(0.0)
    with pytest.raises(ValueError, match="denominators"):
        ratio_ci(num, [1.0])


def test_share_prints_the_gap_closed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _run(tmp_path / "a", "champion", {0: (20, 30), 1: (25, 30), 2: (10, 20)})  # gains 10, 5, 10
    b = _run(tmp_path / "b", "oracle", {0: (10, 30), 1: (20, 30), 2: (0, 20)})  # gains 20, 10, 20
    assert paired.main(["--share", str(a), str(b)]) == 0
    assert "champion closes 0.50 [0.50, 0.50] of the baseline -> oracle gap" in capsys.readouterr().out
