"""``training.distill_mc``: mc-labelled shards, deterministic on any worker count, and a
distilled policy the ``ppo`` agent plays."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")

from agents.mexican_train.base import Decision, decision_for
from agents.mexican_train.planner import PlannerAgent
from agents.registry import make_agent
from mtrain_env.mexican_train import env as make_env
from training import distill_mc
from training.choices import play_choices
from training.distill_mc import KEYS, load_labels, shard_paths

POLICY = str(Path(__file__).resolve().parent.parent / "agents" / "policies" / "ismcts_puct.npz")
STUDENT = f"ppo[path={POLICY}]"


def _label(out: Path, workers: int, *extra: str) -> None:
    args = ["label", "--out", str(out), "--games", "3", "--shard", "2", "--sims", "6"]
    assert distill_mc.main([*args, "--workers", str(workers), "--no-progress", *extra]) == 0


def test_shards_hold_the_teachers_legal_one_hot_moves(tmp_path: Path) -> None:
    _label(tmp_path, 1, "--student", STUDENT, "--teacher-share", "0.5")
    assert [p.name for p in shard_paths(tmp_path)] == ["labels_00000.npz", "labels_00001.npz"]
    data = load_labels(tmp_path)
    n = len(data["game"])
    assert n > 20 and all(len(data[k]) == n for k in KEYS)
    assert set(np.unique(data["game"])) == {500_000, 500_001, 500_002}
    np.testing.assert_array_equal(data["target"].sum(1), 1.0)
    chosen = data["target"].argmax(1)
    assert data["mask"][np.arange(n), chosen].all(), "a label is an illegal move"
    assert (data["mask"].sum(1) >= 2).all(), "forced moves are not labelled"
    assert data["mask"][np.arange(n), data["prior"]].all()
    assert "values" not in data
    with pytest.raises(SystemExit) as exc:  # move labels cannot train advantages
        distill_mc.main(["train", "--out", str(tmp_path), "--loss", "advantage"])
    assert exc.value.code == 2 and not (tmp_path / "policy.npz").exists()


def _first_choice(deal: int, decision_class: type[Decision] = Decision) -> Decision:
    """The first decision of ``deal`` with a choice (every move before it is forced): the
    deal's first labelled position (as a ``decision_class``)."""
    e = make_env(num_players=4)
    e.reset(seed=deal)
    while len(decision_for(e, e.agent_selection).legal_actions) == 1:
        e.step(decision_for(e, e.agent_selection).legal_actions[0])
    return decision_class(e, e.agent_selection)


def test_prior_is_the_planners_move(tmp_path: Path) -> None:
    """The first labelled position of a deal has the planner's move as ``prior``."""
    _label(tmp_path, 1, "--student", "planner")
    data = load_labels(tmp_path)
    for deal in (500_000, 500_001):
        decision = _first_choice(deal)
        first = int(np.flatnonzero(data["game"] == deal)[0])
        np.testing.assert_array_equal(data["obs"][first], decision.observation)
        assert data["prior"][first] == PlannerAgent().act(decision)


def test_champion_teacher_labels_the_champions_move(tmp_path: Path) -> None:
    """``--teacher champion``: the first labelled position of a deal carries the move the
    champion (network prior and rollouts, the same ``--sims``) plays there, reset to the deal."""
    _label(tmp_path, 1, "--teacher", f"champion[path={POLICY}]")
    data = load_labels(tmp_path)
    for deal in (500_000, 500_001):
        champion = make_agent("champion", sims=6, path=POLICY)
        champion.reset(deal)
        first = int(np.flatnonzero(data["game"] == deal)[0])
        assert data["target"][first].argmax() == champion.act(_first_choice(deal))
    assert '"teacher": "champion[' in (tmp_path / "label.json").read_text()


def test_oracle_teacher_labels_the_true_states_values_on_the_seats_observation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--teacher oracle[rollout=policy] --target values``: the first labelled position of a
    deal keeps the seat's own observation, and its values are the oracle's playouts of the
    TRUE state there (every hand, the draws) less the planner move's; only the teacher is
    handed the decision that carries the true state (the planner sees the seat's view)."""
    from agents.mexican_train.oracle import CheatDecision, OracleAgent

    handed: list[type] = []

    class SpyPlanner(PlannerAgent):
        def act(self, decision: Decision) -> int:
            handed.append(type(decision))
            return super().act(decision)

    monkeypatch.setattr(
        distill_mc,
        "make_agent",
        lambda name, **kw: SpyPlanner() if name == "planner" else make_agent(name, **kw),
    )
    _label(tmp_path, 1, "--teacher", "oracle[rollout=policy]", "--target", "values")
    assert handed and set(handed) == {Decision}
    data = load_labels(tmp_path)
    assert '"teacher": "oracle[rollout=policy]"' in (tmp_path / "label.json").read_text()
    for deal in (500_000, 500_001):
        fair, cheat = _first_choice(deal), _first_choice(deal, CheatDecision)
        oracle = OracleAgent(rollout="policy")
        oracle.act(cheat)
        first = int(np.flatnonzero(data["game"] == deal)[0])
        np.testing.assert_array_equal(data["obs"][first], fair.observation)
        prior = PlannerAgent().act(fair)
        expected = {a: v - oracle.last_values[prior] for a, v in oracle.last_values.items()}
        assert data["prior"][first] == prior
        assert {a: float(data["values"][first, a]) for a in fair.legal_actions} == pytest.approx(expected)
        assert data["target"][first].argmax() == max(expected, key=lambda a: (expected[a], -a))


def test_opponents_planner_labels_one_seat_against_planners(tmp_path: Path) -> None:
    """``--opponents planner``: game ``g`` labels seat ``g mod 4`` only, and replaying its
    labels in that seat with ``planner`` in the others meets exactly the labelled positions."""
    _label(tmp_path, 1, "--opponents", "planner")
    data = load_labels(tmp_path)
    for g, deal in enumerate((500_000, 500_001, 500_002)):
        rows = np.flatnonzero(data["game"] == deal)
        assert rows.size >= 3
        moves = iter(rows.tolist())
        planner = PlannerAgent()

        def replay(decision: Decision, seat: int = g % 4, moves=moves, planner=planner) -> int:
            if decision.seat != seat:
                return int(planner.act(decision))
            if len(decision.legal_actions) == 1:
                return int(decision.legal_actions[0])
            row = next(moves)
            np.testing.assert_array_equal(data["obs"][row], decision.observation)
            return int(data["target"][row].argmax())

        play_choices(make_env(num_players=4), deal, replay)
        assert next(moves, None) is None  # every label was met, in order
    assert '"opponents": "planner"' in (tmp_path / "label.json").read_text()


def test_directories_labelled_before_teacher_existed_resume_as_mc(tmp_path: Path) -> None:
    _label(tmp_path, 1)
    settings = tmp_path / "label.json"
    old = {k: v for k, v in json.loads(settings.read_text()).items() if k not in ("teacher", "opponents")}
    settings.write_text(json.dumps(old))
    _label(tmp_path, 1)  # the old default teacher: accepted
    with pytest.raises(SystemExit) as exc:
        _label(tmp_path, 1, "--teacher", "champion")
    assert exc.value.code == 2


@pytest.mark.parametrize("damaged", [b'{"sims": ', b"\xff{}", b"[1]"])
def test_damaged_label_settings_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damaged: bytes
) -> None:
    """A ``label.json`` that is not an object of settings: exit 2 in one line naming it."""
    (tmp_path / "label.json").write_bytes(damaged)
    with pytest.raises(SystemExit) as exc:
        _label(tmp_path, 1)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1, err
    assert f"{tmp_path / 'label.json'}: not the label settings of a distill_mc run (" in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".lock") == ["label.json"]


def test_same_shards_on_one_and_two_workers_and_resume_skips(tmp_path: Path) -> None:
    _label(tmp_path / "one", 1, "--student", STUDENT)
    _label(tmp_path / "two", 2, "--student", STUDENT)
    one, two = load_labels(tmp_path / "one"), load_labels(tmp_path / "two")
    for k in KEYS:
        np.testing.assert_array_equal(one[k], two[k])
    first = shard_paths(tmp_path / "one")[0]
    before = first.stat().st_mtime_ns
    _label(tmp_path / "one", 1, "--student", STUDENT)  # everything on disk: nothing redone
    assert first.stat().st_mtime_ns == before
    with pytest.raises(SystemExit) as exc:  # other settings: refused, nothing touched
        _label(tmp_path / "one", 1, "--student", "planner")
    assert exc.value.code == 2 and first.stat().st_mtime_ns == before


def test_the_student_changes_the_positions(tmp_path: Path) -> None:
    _label(tmp_path / "teacher", 1)
    _label(tmp_path / "mixed", 1, "--student", STUDENT, "--teacher-share", "0")
    teacher, mixed = load_labels(tmp_path / "teacher"), load_labels(tmp_path / "mixed")
    assert len(teacher["obs"]) != len(mixed["obs"]) or not np.array_equal(teacher["obs"], mixed["obs"])


@pytest.mark.parametrize("init", [["--init", POLICY], ["--hidden", "16", "--pair-hidden", "8"]])
def test_train_writes_a_policy_the_ppo_agent_plays(tmp_path: Path, init: list[str]) -> None:
    _label(tmp_path, 1, "--student", STUDENT)
    assert distill_mc.main(["train", "--out", str(tmp_path), *init, "--epochs", "2"]) == 0
    data = load_labels(tmp_path)
    agent = make_agent("ppo", path=str(tmp_path / "policy.npz"))
    e = make_env(num_players=4)
    e.reset(seed=3)
    decision = decision_for(e, e.agent_selection)
    assert agent.act(decision) in decision.legal_actions
    assert (tmp_path / "metrics.jsonl").read_text().count("test_top1") == 1
    row = json.loads((tmp_path / "metrics.jsonl").read_text())
    assert 0.0 <= row["before_top1"] <= 1.0 and row["before_xent"] > 0.0  # the net as it came
    assert data["obs"].shape[1] == len(decision.observation)


def test_policy_out_and_shards_fit_several_policies_on_one_set_of_labels(tmp_path: Path) -> None:
    labels = tmp_path / "labels"
    _label(labels, 2)  # two shards
    whole = load_labels(labels)
    first = load_labels(labels, 1)
    assert 0 < len(first["obs"]) < len(whole["obs"])
    np.testing.assert_array_equal(first["obs"], whole["obs"][: len(first["obs"])])
    fits = [("a.npz", []), ("b.npz", ["--shards", "1"])]
    for name, extra in fits:
        argv = ["train", "--out", str(labels), "--init", POLICY, "--epochs", "1", "--policy-out"]
        assert distill_mc.main([*argv, str(tmp_path / name), *extra]) == 0
    assert not (labels / "policy.npz").exists()
    rows = [json.loads(line) for line in (labels / "metrics.jsonl").read_text().splitlines()]
    assert [r["policy"] for r in rows] == [str(tmp_path / n) for n, _ in fits]
    assert [r["positions"] for r in rows] == [len(whole["obs"]), len(first["obs"])]
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        assert any(not np.array_equal(a[k], b[k]) for k in a.files)  # two fits, two data sets
    with pytest.raises(SystemExit) as exc:
        distill_mc.main(["train", "--out", str(labels), "--shards", "3"])
    assert exc.value.code == 2 and len(rows) == 2


def test_anchored_targets_mix_the_label_with_the_networks_own_policy(tmp_path: Path) -> None:
    from agents.mexican_train.tilenet import read_selfplay_policy

    _label(tmp_path, 1)
    data = load_labels(tmp_path)
    mixed = distill_mc.anchored_targets(read_selfplay_policy(POLICY), data, 0.9)
    np.testing.assert_allclose(mixed.sum(1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(mixed.argmax(1), data["target"].argmax(1))  # the label stays on top
    own = (mixed * 1.9 - data["target"]) / 0.9  # the network's policy, recovered
    assert not own[~data["mask"]].any(), "weight on an illegal move"
    np.testing.assert_allclose(own.sum(1), 1.0, atol=1e-4)  # a distribution over the legal moves
    first = _first_choice(500_000)
    np.testing.assert_array_equal(data["obs"][0], first.observation)
    assert own[0].argmax() == make_agent("ppo", path=POLICY).act(first)  # the ppo agent's move
    argv = ["train", "--out", str(tmp_path), "--init", POLICY, "--anchor", "0.5", "--epochs", "1"]
    assert distill_mc.main(argv) == 0
    row = json.loads((tmp_path / "metrics.jsonl").read_text())
    assert row["anchor"] == 0.5 and row["label_entropy"] > 0.0  # the fit saw mixed targets


def test_value_labels_are_advantages_over_the_planners_move_and_train(tmp_path: Path) -> None:
    _label(tmp_path, 1, "--student", "planner", "--target", "values")
    data = load_labels(tmp_path)
    n = len(data["game"])
    values, mask = data["values"], data["mask"]
    assert values.shape == mask.shape and n > 20
    np.testing.assert_array_equal(values[np.arange(n), data["prior"]], 0.0)
    assert not values[~mask].any(), "an illegal move has a value"
    best = np.where(mask, values, -np.inf).argmax(1)
    np.testing.assert_array_equal(data["target"].argmax(1), best)
    assert (np.abs(values[mask]) > 0).any()
    argv = ["train", "--out", str(tmp_path), "--loss", "advantage", "--epochs", "2", "--hidden", "16"]
    assert distill_mc.main(argv) == 0
    metrics = (tmp_path / "metrics.jsonl").read_text()
    assert '"loss": "advantage"' in metrics and '"label_gain@1.0"' in metrics
    agent = make_agent("mc_student", path=str(tmp_path / "policy.npz"), margin=1.0)
    e = make_env(num_players=4)
    e.reset(seed=3)
    decision = decision_for(e, e.agent_selection)
    assert agent.act(decision) in decision.legal_actions


def test_improved_targets_are_the_network_tilted_by_the_values(tmp_path: Path) -> None:
    from agents.mexican_train.tilenet import read_selfplay_policy

    _label(tmp_path, 1, "--student", "planner", "--target", "values")
    data = load_labels(tmp_path)
    net = read_selfplay_policy(POLICY)
    p0 = distill_mc.network_policy(net, data["obs"], data["mask"])
    mask, values = data["mask"], data["values"]
    for temperature in (0.5, 2.0):
        target = distill_mc.improved_targets(net, data, temperature)
        np.testing.assert_allclose(target.sum(1), 1.0, atol=1e-5)
        assert not target[~mask].any(), "weight on an illegal move"
        # p0 * exp(values / T) up to a constant a row: log(target / p0) - values / T is flat
        # (on the moves where neither underflows in float32)
        seen = mask & (p0 > 1e-6) & (target > 1e-6)
        ratio = np.where(seen, target, 1.0) / np.where(seen, p0, 1.0)
        tilt = np.where(seen, np.log(ratio) - values / temperature, np.nan)
        spread = np.nanmax(tilt, 1) - np.nanmin(tilt, 1)
        assert np.all(spread < 1e-3), spread.max()
    cold = distill_mc.improved_targets(net, data, 1e-4)  # the values decide
    decided = np.sort(np.where(mask, values, -np.inf), 1)
    clear = decided[:, -1] - decided[:, -2] > 0.01  # no tie at the top
    np.testing.assert_array_equal(cold[clear].argmax(1), data["target"][clear].argmax(1))
    hot = distill_mc.improved_targets(net, data, 1e6)  # the network stays
    np.testing.assert_allclose(hot, p0, atol=1e-4)
    argv = ["train", "--out", str(tmp_path), "--init", POLICY, "--loss", "improve", "--temperature", "2"]
    assert distill_mc.main([*argv, "--epochs", "1"]) == 0
    row = json.loads((tmp_path / "metrics.jsonl").read_text())
    assert row["loss"] == "improve" and row["temperature"] == 2.0 and row["label_entropy"] > 0.0
    agent = make_agent("ppo", path=str(tmp_path / "policy.npz"))
    decision = _first_choice(500_000)
    assert agent.act(decision) in decision.legal_actions


@pytest.mark.parametrize("loss", ["improve", "advantage"])
def test_value_losses_refuse_move_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], loss: str
) -> None:
    _label(tmp_path, 1)  # --target move: no values
    with pytest.raises(SystemExit) as exc:
        distill_mc.main(["train", "--out", str(tmp_path), "--init", POLICY, "--loss", loss])
    assert exc.value.code == 2
    assert f"--loss {loss} needs shards labelled with --target values" in capsys.readouterr().err
    assert not (tmp_path / "policy.npz").exists() and not (tmp_path / "metrics.jsonl").exists()


def test_advantage_rule_deviates_only_beyond_the_margin() -> None:
    scores = np.array([[0.0, 3.0, 1.0], [0.0, 0.5, 9.0], [2.0, 1.0, 0.0]])
    mask = np.array([[True, True, True], [True, True, False], [True, True, True]])
    prior = np.array([0, 0, 0])
    np.testing.assert_array_equal(distill_mc.advantage_moves(scores, mask, prior, 1.0), [1, 0, 0])
    np.testing.assert_array_equal(distill_mc.advantage_moves(scores, mask, prior, 0.0), [1, 1, 0])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["label", "--teacher-share", "1.5"], "--teacher-share must be in [0, 1]"),
        (["label", "--student", "ppo[path=missing.npz]"], "missing.npz"),
        (["label", "--student", "plannr"], "unknown agent 'plannr'"),
        (["label", "--student", STUDENT, "--players", "3"], "has 457 actions, the game has 366"),
        (["train", "--init", POLICY], "no labels_NNNNN.npz shards"),
        (["label", "--target", "q"], "invalid choice: 'q'"),
        (["label", "--teacher", "planner"], "--teacher must be one of mc, champion, oracle"),
        (["label", "--teacher", "oracle[rollout=x]"], "rollout must be one of"),
        (["label", "--teacher", "champion[sims=9]"], "give the budget with --sims, not sims="),
        (["train", "--anchor", "1"], "--anchor must be in [0, 1) so the label stays the argmax, got 1.0"),
        (["train", "--anchor", "0.5", "--loss", "advantage"], "--anchor mixes the xent targets"),
        (["train", "--policy-out", "/nonexistent/dir/p.npz"], "no directory /nonexistent/dir"),
        (["train", "--loss", "improve"], "--loss improve weights the starting network's policy: give --init"),
        (["train", "--loss", "improve", "--temperature", "0"], "--temperature: must be a number > 0"),
        (["train", "--anchor", "0.5", "--loss", "improve"], "--loss improve has none"),
        (
            ["train", "--temperature", "2"],
            "--temperature weights --loss improve's targets; --loss xent has none",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exc:
        distill_mc.main([argv[0], "--out", str(out), *argv[1:]])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def test_a_larger_games_relabels_the_short_last_shard_and_a_smaller_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--games 3`` then ``--games 4`` (shards of 2): the 1-game last shard is relabelled,
    so the set is the one ``--games 4`` labels from scratch; going back to fewer games is
    refused in one line naming the shard and both counts, nothing rewritten."""
    _label(tmp_path / "grown", 1)  # --games 3
    assert distill_mc.shard_games(tmp_path / "grown" / "labels_00001.npz") == 1
    args = ["label", "--shard", "2", "--sims", "6", "--workers", "1", "--no-progress"]
    assert distill_mc.main([*args, "--out", str(tmp_path / "grown"), "--games", "4"]) == 0
    assert "labels_00001.npz holds 1 of its 2 games: relabelling it" in capsys.readouterr().out
    assert distill_mc.main([*args, "--out", str(tmp_path / "straight"), "--games", "4"]) == 0
    grown, straight = load_labels(tmp_path / "grown"), load_labels(tmp_path / "straight")
    for k in KEYS:
        np.testing.assert_array_equal(grown[k], straight[k])
    shard = tmp_path / "grown" / "labels_00001.npz"
    before = shard.stat().st_mtime_ns
    capsys.readouterr()
    for games, want in (("3", 1), ("2", 0)):  # a shorter last shard; a shard past the last
        with pytest.raises(SystemExit) as exc:
            distill_mc.main([*args, "--out", str(tmp_path / "grown"), "--games", games])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and err.count("\n") == 1, err
        assert f"--games {games}: {shard} holds 2 games, its share of --games {games} is {want}" in err
    assert shard.stat().st_mtime_ns == before


def test_a_directory_in_use_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mtrain_env.tilegame.files import run_lock

    with run_lock(tmp_path), pytest.raises(SystemExit) as exc:  # flock: refused in this process too
        _label(tmp_path, 1)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert f"--out: {tmp_path} is in use by pid {os.getpid()} (one run writes" in err
    assert not list(tmp_path.glob("labels_*")) and not (tmp_path / "label.json").exists()
