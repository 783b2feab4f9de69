"""The hand model (:mod:`agents.mexican_train.hand_model`) and its use by ``mc_infer`` / ``champion``.

* every hidden tile's true place is one the features allow (voids, the observer, empty
  hands and boneyard excluded), and nothing else is allowed away from a void;
* with a zero network the model is the counts-only prior; its rows are distributions;
* the scorer is ``alpha`` times the sum of the chosen places' log-probabilities;
* files are checked on load (arrays, shapes, finite numbers, no pickle, the table);
* ``champion[model=learned]`` weights its worlds from the first decision, sees nothing
  hidden and writes the same CSV on 1 and 2 workers;
* the training command fits, writes and reports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train.base import decision_for
from agents.mexican_train.hand_model import (
    FEATURE_NAMES,
    HAND_MODELS,
    HandModel,
    LearnedModel,
    feature_count,
    hand_model_path,
    tile_features,
)
from agents.mexican_train.planner import PlannerAgent
from mtrain_env.mexican_train import GameConfig


def _arrays(players: int, max_pips: int = 12, hidden: int = 4, scale: float = 0.0) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    f = feature_count(players)
    return {
        "w1": rng.normal(size=(f, hidden)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (scale * rng.normal(size=hidden)).astype(np.float32),
        "b2": np.float32(0.0),
        "players": np.int64(players),
        "max_pips": np.int64(max_pips),
    }


def _planner_views(players: int, seed: int):  # type: ignore[no-untyped-def]
    """(view, attributed plays, true state) at every decision of a planner game."""
    from training.hand_model import planner_positions

    for position in planner_positions(players, [seed], "test"):
        yield position.view, position.plays, position.truth


@pytest.mark.parametrize("players", [2, 4])
def test_true_places_are_allowed(players: int) -> None:
    checked = voided = 0
    for view, plays, state in _planner_views(players, seed=3):
        feats, allowed, unseen = tile_features(view, plays)
        assert feats.shape == (len(unseen), players, feature_count(players))
        opponents = [q for q in range(players) if q != view.seat]
        for u, t in enumerate(unseen):
            places = [c for c, q in enumerate(opponents) if state.hands[q] >> t & 1]
            place = places[0] if places else players - 1
            assert allowed[u, place]
            checked += 1
        voided += int((~allowed[:, : players - 1]).sum())
        assert (feats[:, players - 1, 0] == 1).all() and (feats[:, : players - 1, 0] == 0).all()
    assert checked > 500 and voided > 0  # voids were shown and honoured


def test_a_zero_network_is_the_counts_only_prior() -> None:
    view, plays, _state = next(v for i, v in enumerate(_planner_views(4, seed=5)) if i == 12)
    feats, allowed, _unseen = tile_features(view, plays)
    model = HandModel(_arrays(4))
    p = np.exp(model.log_probs(feats, allowed))
    assert np.allclose(p.sum(axis=1), 1.0)
    assert (p[~allowed] == 0).all()
    share = feats[:, :, FEATURE_NAMES.index("hand_share")] * allowed
    assert np.allclose(p, share / share.sum(axis=1, keepdims=True), atol=1e-6)


def test_the_scorer_sums_the_places_log_probabilities() -> None:
    model = HandModel(_arrays(4, scale=1.0))
    for i, (view, plays, state) in enumerate(_planner_views(4, seed=6)):
        if i != 20:
            continue
        learned = LearnedModel(model, 2.0)
        logp = learned.place_log_probs(view, plays)
        unseen = [t for t in range(view.config.num_tiles) if view.unseen >> t & 1]
        owners = np.array([[next((q for q in range(4) if state.hands[q] >> t & 1), -1) for t in unseen]])
        expected = 2.0 * sum(logp[u, 4 if q < 0 else q] for u, q in enumerate(owners[0]))
        assert learned.scorer(view, plays)(owners)[0] == pytest.approx(expected)
        assert LearnedModel(model, 0.0).scorer(view, plays)(owners)[0] == 0.0
        assert np.isneginf(logp[:, view.seat]).all()
        return
    raise AssertionError("the game ended before decision 20")


def test_files_are_checked(tmp_path: Path) -> None:
    good = _arrays(4)
    path = tmp_path / "h.npz"
    HandModel(good).save(path)
    assert HandModel.load(path).players == 4
    with pytest.raises(ValueError, match="needs the arrays"):
        HandModel({k: v for k, v in good.items() if k != "w2"})
    with pytest.raises(ValueError, match="do not fit"):
        HandModel({**good, "w1": good["w1"][:-1]})
    with pytest.raises(ValueError, match="non-finite"):
        HandModel({**good, "b1": np.full(4, np.nan, np.float32)})
    objects = tmp_path / "objects.npz"
    np.savez(objects, **{**good, "w1": np.array([object()], dtype=object)})
    with pytest.raises(ValueError):
        HandModel.load(objects)  # object arrays need pickle, which load refuses
    with pytest.raises(ValueError, match="trained for 4 players"):
        HandModel(good).check(GameConfig.make(num_players=2))
    with pytest.raises(ValueError, match="hand models ship for"):
        hand_model_path(GameConfig.make(num_players=3))


def _saved(tmp_path: Path, name: str, **arrays: Any) -> Path:
    path = tmp_path / f"{name}.npz"
    np.savez(path, **arrays)
    return path


def _huge_w1(tmp_path: Path, good: dict[str, Any], shape: tuple[int, int] = (1 << 20, 1 << 20)) -> Path:
    """A file whose w1 header declares ``shape`` floats (by default 4 TiB if believed)."""
    import io
    import zipfile

    path = _saved(tmp_path, "huge", **good)
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": shape})
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members["w1.npy"] = header.getvalue() + bytes(64)
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)
    return path


def test_damaged_files_are_refused_naming_the_file_and_the_array(tmp_path: Path) -> None:
    """``HandModel.load`` (mc_infer's ``hands=``) reads exactly the six arrays, each header
    before its data: one ValueError naming the file, never numpy's or zipfile's errors."""
    good = _arrays(4)
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip")
    directory = tmp_path / "directory.npz"
    directory.mkdir()
    cases = {
        garbage: "not a hand model file",
        directory: r"cannot read it \(Is a directory\)",
        _saved(tmp_path, "table", **{**good, "players": np.int64(99)}): "a model for 99 players",
        _saved(tmp_path, "str", **{**good, "w1": good["w1"].astype(str)}): "w1: dtype <U",
        _saved(tmp_path, "flat", **{**good, "w1": good["w1"].ravel()}): r"w1: shape \(",
        _saved(
            tmp_path, "extra", **good, x=np.zeros(1)
        ): r"unexpected members \['x.npy'\] \(a hand model holds",
        _saved(
            tmp_path, "missing", **{k: v for k, v in good.items() if k != "b2"}
        ): r"missing arrays \['b2.npy'\] \(",
        _saved(tmp_path, "complex", **{**good, "w1": good["w1"].astype(np.complex64)}): "w1: dtype complex64",
        _huge_w1(tmp_path, good): r"w1: shape \(1048576, 1048576\)",
    }
    for path, says in cases.items():
        with pytest.raises(ValueError, match=says) as err:
            HandModel.load(path)
        assert str(err.value).startswith(f"{path}: ") and "\n" not in str(err.value)
    with pytest.raises(FileNotFoundError):  # missing stays missing (mc_infer says so in one line)
        HandModel.load(tmp_path / "absent.npz")


def test_the_shipped_models_fit_their_tables() -> None:
    for (players, pips), path in HAND_MODELS.items():
        model = HandModel.load(path)
        model.check(GameConfig.make(num_players=players, max_pips=pips))
        assert path.stat().st_size < 100_000


def test_learned_champion_weights_from_the_first_decision(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    from agents.mexican_train.champion import ChampionAgent

    env = mtrain_env.raw_env(num_players=4)
    env.reset(seed=4)
    plain = ChampionAgent(seed=5, sims=32)
    learned = ChampionAgent(seed=5, sims=32, pool=8, model="learned", alpha=2.0)
    planners = [PlannerAgent() for _ in range(4)]
    first_differs = None
    while not all(env.terminations.values()):
        decision = decision_for(env, env.agent_selection)
        if decision.seat == 0:
            action = plain.act(decision)
            assert learned.act(decision) in decision.legal_actions
            if plain.last_values and first_differs is None:
                first_differs = learned.last_values != plain.last_values or learned.tracker.plays != []
        else:
            action = planners[decision.seat].act(decision)
        env.step(action)
    assert first_differs is True
    assert learned.params()["model"] == "learned" and learned.params()["alpha"] == 2.0


def test_learned_champion_sees_no_hidden_information(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    pytest.importorskip("torch")
    from agents.mexican_train.champion import ChampionAgent
    from agents.mexican_train.tilenet import NetSpec, build_net, save_selfplay_policy
    from tests.test_agents import _leak_check

    config = GameConfig.make(num_players=3, max_pips=6)
    net = build_net(NetSpec.make("graph", config, hidden=16, pair_hidden=8), seed=2)
    path = save_selfplay_policy(net, tmp_path / "net3.npz")
    hands = tmp_path / "hands3.npz"
    HandModel(_arrays(3, max_pips=6, scale=1.0)).save(hands)
    compared, differing = _leak_check(
        lambda: ChampionAgent(seed=3, sims=12, path=path, pool=4, model="learned", hands=str(hands))
    )
    assert compared >= 3
    assert differing == 0


def test_learned_champion_same_csv_on_one_and_two_workers(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    from agents.tournament import AgentSpec
    from tests.csv_workers import same_csv_on_one_and_two_workers

    champion = AgentSpec("champion", {"sims": 12, "pool": 4, "model": "learned"})
    lineup = [champion.default_label(), "planner", "planner", "planner"]
    one = same_csv_on_one_and_two_workers(tmp_path, [champion, AgentSpec("planner")], lineup)
    assert b"champion" in one


def test_bad_inference_parameters_name_themselves() -> None:
    from agents.mexican_train.mc_infer import MCInferAgent

    with pytest.raises(ValueError, match="model must be one of"):
        MCInferAgent(model="oracle")
    with pytest.raises(ValueError, match="alpha"):
        MCInferAgent(model="learned", alpha=-1.0)
    with pytest.raises(ValueError, match="hands= is the file"):
        MCInferAgent(hands="x.npz")


def test_training_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    from training.hand_model import main

    out = tmp_path / "h2.npz"
    args = ["--players", "2", "--games", "3", "--eval-games", "2", "--epochs", "1", "--out", str(out)]
    assert (
        main([*args, "--reveals", "1.0", "--particles", "4", "--history", "20", "--history-from-truth"]) == 0
    )
    text = capsys.readouterr().out
    assert "per-tile log-loss" in text and "prior worlds" in text and "learned alpha=" in text
    # the true hands: every tile placed right (all, fitting) and every two worlds agree
    assert "truth kept, reveal=1.0   100.00%         100.00%       100.00%" in text
    assert "particle filter, 4" in text
    assert "history sampler, 20" in text and "from the truth (cheat)" in text
    HandModel.load(out).check(GameConfig.make(num_players=2))
    assert main([*args, "--history", "20", "--history-chains", "2"]) == 0
    assert "2 walks, 20 " in capsys.readouterr().out
    for bad_args in (
        ["--out", str(tmp_path / "h.pt")],
        [*args, "--reveals", "1.5"],
        [*args, "--history", "20", "--history-chains", "2", "--history-from-truth"],
        [*args, "--history", "3", "--history-chains", "4"],
    ):
        with pytest.raises(SystemExit) as bad:
            main(bad_args)
        assert bad.value.code == 2


def test_agreement_is_the_weighted_share_two_worlds_place_alike() -> None:
    from training.hand_model import _agreement

    a = [0b1111, 0b0011, 0b1100]  # seat 0's hand, then opponents 1 and 2
    b = [0b1111, 0b0101, 0b1010]  # one tile of each opponent's hand in common with a
    assert _agreement([a, a], np.array([0.5, 0.5])) == 4.0
    assert _agreement([a, b], np.array([0.5, 0.5])) == 2.0
    assert _agreement([a, a, b], np.array([0.5, 0.5, 0.0])) == 4.0  # a weightless world counts for nothing
    assert _agreement([a], np.array([1.0])) == 0.0
