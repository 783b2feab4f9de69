"""Tests written from a mutation-testing pass over the agents' inference and heuristics.

Each test pins a behaviour that a mutant of ``agents/mexican_train/{inference, history,
hand_model, chains, planner, greedy, features}.py`` changed without any fast test noticing
(docs/mutation.md). Positions are scripted deals (``tests/scripted.py``: double-6, the
engine 6-6 set aside, moves with ABSOLUTE trains).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mtrain_env
from agents.mexican_train import inference
from agents.mexican_train.base import decision_for
from agents.mexican_train.chains import ChainSolver, chain_ends
from agents.mexican_train.features import FeatureEncoder, feature_size
from agents.mexican_train.greedy import GreedyAgent
from agents.mexican_train.hand_model import (
    FEATURE_NAMES,
    HandModel,
    LearnedModel,
    feature_count,
    hand_model_path,
    tile_features,
)
from agents.mexican_train.history import HistoryChains, HistorySampler, history_factory
from agents.mexican_train.inference import OpponentModel, Play, PlayTracker, resample, world_owners
from agents.mexican_train.planner import PlannerAgent
from mtrain_env.mexican_train.core.public import PublicView, banned_tiles, public_view
from tests.scripted import act, deal_env
from tests.test_hand_model import _huge_w1


def _tracked(env: mtrain_env.raw_env, tracker: PlayTracker, seat: int, *moves: str) -> None:
    """Play ``moves`` (absolute trains), feeding ``tracker`` the view of ``seat`` at each of
    its decisions, as an agent's tracker is fed."""
    for move in moves:
        decision = decision_for(env, env.agent_selection)
        if decision.seat == seat:
            tracker.update(decision.view)
        act(env, move)


def _named(env: mtrain_env.raw_env, plays: list[Play]) -> list[tuple[int, str, int]]:
    """Plays as ``(seat, "a-b", end)`` for readable assertions."""
    tiles = env.config.tiles
    return [(p.seat, "-".join(map(str, sorted(tiles.tiles[p.tile]))), p.end) for p in plays]


# --------------------------------------------------------------------------- inference


def test_tracker_does_not_attribute_a_satisfied_double_to_the_trains_owner_r20() -> None:
    """Seat 1 opens 6-5 5-5 and stops (R13: 5-5 unsatisfied, its train unmarked). Seat 0
    (the observer) must then lay 5-2 on seat 1's train (R20). Seat 1 follows with 2-3 on
    its own train. Seat 0's tracker may attribute 6-5, 5-5 and 2-3 to seat 1, never 5-2,
    which seat 0 itself laid."""
    env = deal_env([["6-0", "5-2", "1-1", "0-3"], ["6-5", "5-5", "2-3", "4-4"]], hand_size=4)
    tracker = PlayTracker()
    _tracked(env, tracker, 0, "0-6 @0", "PASS", "5-6 @1", "5-5 @1", "PASS", "2-5 @1", "2-3 @1")
    tracker.update(decision_for(env, env.agent_selection).view)
    named = _named(env, tracker.plays)
    assert (1, "5-6", 6) in named and (1, "2-3", 2) in named
    assert all(tile != "2-5" for _seat, tile, _end in named), named


@pytest.mark.parametrize("players", [2, 4, 6])
def test_every_attributed_play_was_laid_by_that_seat(players: int) -> None:
    """Over whole planner games, each play a seat's tracker attributes is a tile that seat
    laid (the truth read from the moves made). Before the R20 fix 30 of 1,897 were not."""
    laid_by: dict[tuple[int, int], int] = {}
    attributed: set[tuple[int, Play]] = set()
    for pos in inference.planner_positions(players, range(100, 110)):
        if pos.move < pos.game.draw:
            laid_by[pos.seed, pos.move // pos.game.width] = pos.view.seat
        attributed |= {(pos.seed, p) for p in pos.plays}
    assert len(attributed) > 20 * players
    wrong = [(seed, p) for seed, p in attributed if laid_by[seed, p.tile] != p.seat]
    assert wrong == []


def _three_seat_turn() -> mtrain_env.raw_env:
    """Three seats open their trains; seat 0 then draws and passes, seat 1 starts the
    Mexican train (its own train stays as it was) and seat 2 extends its own train."""
    env = deal_env([["6-0", "0-1", "5-5"], ["6-1", "6-4", "3-3"], ["6-2", "2-3", "4-4"]])
    return env


def test_a_new_tracker_has_no_plays() -> None:
    tracker = PlayTracker()
    assert tracker.plays == []
    tracker.plays.append(Play(1, 0, 0))
    tracker.reset()
    assert tracker.plays == [] and tracker.prev is None


def test_tracker_reads_every_opponent_past_one_that_did_not_play_on_its_train() -> None:
    """Seat 1 plays on the Mexican train (its own train unchanged), seat 2 on its own
    train: seat 0's tracker attributes seat 2's play all the same."""
    env = _three_seat_turn()
    tracker = PlayTracker()
    opening = ["0-6 @0", "0-1 @0", "PASS", "1-6 @1", "PASS", "2-6 @2", "PASS"]
    _tracked(env, tracker, 0, *opening, "DRAW", "PASS", "4-6 @mex", "2-3 @2")
    tracker.update(decision_for(env, env.agent_selection).view)
    assert _named(env, tracker.plays) == [(1, "1-6", 6), (2, "2-6", 6), (2, "2-3", 2)]


def test_tracker_starts_afresh_on_a_view_of_another_seat() -> None:
    """A view of another seat of the same game cannot follow seat 0's (R10/R16 say nothing
    about whose plays the other seat saw): the plays are dropped."""
    env = _three_seat_turn()
    tracker = PlayTracker()
    _tracked(env, tracker, 0, "0-6 @0", "0-1 @0", "PASS", "1-6 @1", "PASS", "2-6 @2", "PASS")
    tracker.update(decision_for(env, env.agent_selection).view)
    assert len(tracker.plays) == 2
    tracker.update(public_view(env.state_obj, env.config, 1))
    assert tracker.plays == []


def test_no_plays_score_every_world_zero() -> None:
    env = deal_env([["6-0"], ["6-1"]])
    view = decision_for(env, env.agent_selection).view
    owners = np.array([[1, -1], [-1, 1], [1, 1]])
    got = OpponentModel(env.config, 3.0).log_likelihoods(view, [], owners)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    assert got.tolist() == [0.0, 0.0, 0.0]


def test_resample_is_stable_far_from_zero() -> None:
    """Log-weights of long logs are large negative numbers; the draw still follows their
    differences (a 9:1 split)."""
    rng = np.random.default_rng(3)
    logw = np.array([-5000.0, -5000.0 + math.log(9.0)])
    picks = [resample(logw, rng) for _ in range(400)]
    assert 0.8 < picks.count(1) / 400 < 0.97


def test_world_owners_names_the_opponent_holding_each_tile() -> None:
    """Seat 0 observes: a tile in seat 1's or seat 2's hand is theirs, anything else
    (the boneyard; the observer's own tiles never reach this list) is -1."""
    env = deal_env([["6-0"], ["6-1"], ["6-2"]])
    world = env.state_obj.copy()
    world.hands = [1 << 3, 1 << 5 | 1 << 7, 1 << 9]
    other = world.copy()
    other.hands = [0, 1 << 9, 1 << 5]
    owners = world_owners([world, other], [5, 9, 3, 11])
    assert owners.tolist() == [[1, 2, -1, -1], [2, 1, -1, -1]]
    assert world_owners([], [5, 9]).shape == (0,)


def test_the_fit_command_defaults_to_thirty_games_from_seed_100(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m agents.mexican_train.inference`` with no options fits betas 0..5 on
    the planner games of seeds 100..129, 4 players (its ``--help``); ``--placement`` scores
    pools of 64 worlds unless ``--pool`` says otherwise."""
    calls: list[tuple[Any, ...]] = []

    def fake_fit(betas: list[float], seeds: range, players: int) -> tuple[int, dict[float, float]]:
        calls.append(("fit", list(betas), seeds, players))
        return 7, {b: -1.0 for b in betas}

    def fake_placement(beta: float, seeds: range, players: int, pool: int) -> tuple[float, float]:
        calls.append(("placement", beta, seeds, players, pool))
        return 0.25, 0.5

    monkeypatch.setattr(inference, "fit", fake_fit)
    monkeypatch.setattr(inference, "placement", fake_placement)
    assert inference.main([]) == 0
    assert calls == [("fit", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], range(100, 130), 4)]
    calls.clear()
    assert inference.main(["--placement", "3"]) == 0
    assert calls[1] == ("placement", 3.0, range(100, 130), 4, 64)
    calls.clear()
    assert inference.main(["--players", "6", "--pool", "8", "--games", "2", "--placement", "1"]) == 0
    assert calls == [
        ("fit", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], range(100, 102), 6),
        ("placement", 1.0, range(100, 102), 6, 8),
    ]
    calls.clear()
    capsys.readouterr()
    assert inference.main(["--games", "3", "--seed", "7", "--betas", "2", "--placement", "1.5"]) == 0
    assert calls == [("fit", [2.0], range(7, 10), 4), ("placement", 1.5, range(7, 10), 4, 64)]
    assert capsys.readouterr().out.splitlines() == [
        "7 own-train planner plays of 3 games (seeds 7..9)",
        "beta   mean log-likelihood",
        " 2.0   -1.0000",
        "hidden tiles in the right hand (beta=1.5): prior 25.00%, weighted 50.00%",
    ]


@pytest.mark.parametrize(("argv", "says"), [(["--players", "9"], "--players"), (["--pool", "0"], "--pool")])
def test_the_fit_command_refuses_a_table_or_pool_out_of_range(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        inference.main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_fit_scores_the_own_unmarked_train_plays_with_the_true_hand() -> None:
    """``fit``: the mean, over the plays planner seats make on their own unmarked trains
    (4 players by default), of ``log P(play | true hand)``; at ``beta = 0`` that is
    ``-log`` of the number of the hand's tiles matching the end."""
    want: list[float] = []
    for view, _plays, game, s, move, _seed in inference.planner_positions(4, [5]):
        if move < game.draw:
            _tile, train = divmod(move, game.width)
            if train == view.seat and not s.markers[train]:
                want.append(-math.log((s.hands[train] & game.tiles.match[s.ends[train]]).bit_count()))
    count, means = inference.fit([0.0, 2.0], [5])
    assert count == len(want) > 5
    assert means[0.0] == pytest.approx(sum(want) / len(want))
    assert means[2.0] != means[0.0]


def test_placement_is_the_mean_share_of_tiles_placed_right() -> None:
    """``placement``: over seat 0's decisions with attributed plays, the share of the
    opponents' tiles a world dealt from the view puts in the right hand, averaged over the
    pool (prior) and weighted by the model (posterior); worlds drawn from the game's seed."""
    from mtrain_env.mexican_train.core.public import sample_state

    players, pool, beta, seeds = 3, 6, 2.0, [4, 1]
    model = OpponentModel(mtrain_env.raw_env(num_players=players).config, beta)
    prior: list[float] = []
    posterior: list[float] = []
    rngs = {seed: np.random.default_rng(seed) for seed in seeds}
    for view, plays, game, truth, _move, seed in inference.planner_positions(players, seeds):
        hidden = sum(truth.hands[q].bit_count() for q in range(1, players))
        if view.seat != 0 or not plays or not hidden:
            continue
        worlds = [sample_state(game, view, rngs[seed]) for _ in range(pool)]
        right = np.array(
            [
                sum((w.hands[q] & truth.hands[q]).bit_count() for q in range(1, players)) / hidden
                for w in worlds
            ]
        )
        w = np.exp(model.log_likelihoods(view, plays, world_owners(worlds, inference.bits_list(view.unseen))))
        prior.append(float(right.mean()))
        posterior.append(float((w * right).sum() / w.sum()))
    assert len(prior) >= 10
    got = inference.placement(beta, seeds, players=players, pool=pool)
    assert got == pytest.approx((float(np.mean(prior)), float(np.mean(posterior))))
    assert 0.0 < got[0] < 1.0 and 0.0 < got[1] < 1.0


def test_the_fit_command_documents_its_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--help`` names the command and says what each option is; the smallest values
    (one game, seed 0) are accepted, and a refusal names the command."""
    with pytest.raises(SystemExit) as done:
        inference.main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for part in (
        "usage: python -m agents.mexican_train.inference",
        "[--placement BETA] [--pool POOL] Fit the opponent model's beta:",
        "log-likelihood of planner plays. options:",
        "--games GAMES planner games (default 30)",
        "--seed SEED first env seed (default 100)",
        "--players PLAYERS seats, double-12 set (default 4)",
        "--placement BETA also score worlds against the truth",
        "--pool POOL worlds a placement pool holds (default 64)",
    ):
        assert part in text
    calls: list[range] = []

    def fake_fit(betas: list[float], seeds: range, players: int) -> tuple[int, dict[float, float]]:
        calls.append(seeds)
        return 0, {}

    monkeypatch.setattr(inference, "fit", fake_fit)
    assert inference.main(["--games", "1", "--seed", "0"]) == 0
    assert calls == [range(1)]
    with pytest.raises(SystemExit):
        inference.main(["--seed", "-1"])
    assert capsys.readouterr().err.startswith("python -m agents.mexican_train.inference: ")


def test_a_negative_beta_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"beta must be >= 0, got -0.5"):
        OpponentModel(mtrain_env.raw_env(num_players=2, max_pips=6).config, -0.5)


# --------------------------------------------------------------------------- hand_model


def _expected_features(view: PublicView, plays: list[Play]) -> dict[tuple[int, int], dict[str, float]]:
    """``{(tile, place): {feature: value}}`` from the definitions beside ``FEATURE_NAMES``
    (place: an opponent's seat, or -1 for the boneyard), written out tile by tile."""
    config = view.config
    tiles = config.tiles
    n = config.num_players
    unseen = [t for t in range(config.num_tiles) if view.unseen >> t & 1]
    hidden = len(unseen)
    out: dict[tuple[int, int], dict[str, float]] = {}
    for t in unseen:
        a, b = tiles.tiles[t]
        fits = [float(view.ends[k] in (a, b)) for k in range(n + 1)]
        shared = {
            "matches_mexican_end": fits[n],
            "open_ends_matched": sum(fits) / (n + 1),
            "double": float(a == b),
            "value": (a + b) / (2 * config.max_pips),
            "boneyard_share": view.boneyard_count / hidden,
            "table_share": view.table.bit_count() / config.num_tiles,
        }
        out[t, -1] = {**shared, "boneyard": 1.0, "hand_share": view.boneyard_count / hidden}
        for q in range(n):
            if q == view.seat:
                continue
            own = fits[q]
            started = float(len(view.trains[q]) > 0)
            mine = [p for p in plays if p.seat == q]
            laid = {p.end for p in mine} | {
                tiles.other_end[p.tile * (config.max_pips + 1) + p.end] for p in mine
            }
            rivals = sum(view.ends[q] in tiles.tiles[u] for u in unseen)
            out[t, q] = {
                **shared,
                "matches_own_end": own,
                "own_started": started,
                "matches_started_own_end": own * started,
                "hand_share": view.hand_counts[q] / hidden,
                "marked": float(view.markers[q]),
                "rivals_on_own_end": rivals / 10,
                "plays_seen": len(mine) / 5,
                "matches_laid_pips": float(a in laid or b in laid),
                "own_length": len(view.trains[q]) / 10,
                "first_turn_done": float(view.first_turn_done[q]),
                "matches_own_end_after_opening": own * float(view.first_turn_done[q]),
                f"seat+{(q - view.seat) % n}": 1.0,
            }
    return out


def _check_features(view: PublicView, plays: list[Play]) -> None:
    """``tile_features`` is the definitions, every (tile, place) pair, every column, and it
    allows a place exactly when the shown voids do (an empty hand, an empty boneyard none)."""
    n = view.config.num_players
    feats, allowed, unseen = tile_features(view, plays)
    places = [q for q in range(n) if q != view.seat] + [-1]
    names = [*FEATURE_NAMES, *(f"seat+{k}" for k in range(1, n))]
    want = _expected_features(view, plays)
    assert unseen == [t for t in range(view.config.num_tiles) if view.unseen >> t & 1]
    for u, t in enumerate(unseen):
        for col, q in enumerate(places):
            row = want[t, q]
            got = {name: float(feats[u, col, i]) for i, name in enumerate(names)}
            assert got == pytest.approx({name: row.get(name, 0.0) for name in names}), (t, q)
            if q < 0:
                assert allowed[u, col] == (view.boneyard_count > 0)
            else:
                free = view.hand_counts[q] > 0 and not banned_tiles(view, q) >> t & 1
                assert allowed[u, col] == free, (t, q)


@pytest.mark.parametrize("boneyard", [[], ["4-6"]])
def test_tile_features_follow_their_definitions_after_a_marked_opening(boneyard: list[str]) -> None:
    """Seat 1 cannot open (R10: marker, empty train); seat 2 lays its only tile and is out
    (R12: the round goes on, its hand allows nothing); seat 0, holding every other tile
    but the boneyard's (none or one), decides. Seat 2's play is given as the tracker
    would attribute it; the view of seat 1 is checked too."""
    env = deal_env(
        [["6-0", "0-1", "5-5"], ["1-3", "4-5", "3-3"], ["6-2"]], boneyard, first_player=1, rest_to=0
    )
    act(env, "PASS", "2-6 @2")
    view = decision_for(env, env.agent_selection).view
    assert view.seat == 0 and view.markers[1] and view.hand_counts[2] == 0
    assert view.boneyard_count == len(boneyard)
    _check_features(view, [Play(2, env.config.tiles.tile_id(2, 6), 6)])
    _check_features(public_view(env.state_obj, env.config, 1), [])


def test_tile_features_follow_their_definitions_in_play() -> None:
    """Later in a round, 4 seats: seat 2 draws (R16: it has shown it lacks the pips it could
    have played) and lays the drawn tile, seat 3 extends its train, seat 0 observes."""
    env = deal_env(
        [["6-0", "0-1", "5-5"], ["6-1", "6-4", "3-3", "1-2"], ["6-2", "4-4", "0-0"], ["6-3", "3-5", "1-1"]],
        first_player=2,
        hand_size=4,
    )
    act(env, "2-6 @2", "PASS", "3-6 @3", "PASS", "0-6 @0", "0-1 @0", "PASS", "1-6 @1", "1-2 @1", "PASS")
    act(env, "DRAW", "0-2 @2", "3-5 @3")
    view = decision_for(env, env.agent_selection).view
    assert view.seat == 0 and banned_tiles(view, 2)
    tiles = env.config.tiles
    _check_features(view, [])
    _check_features(view, [Play(2, tiles.tile_id(0, 2), 2), Play(3, tiles.tile_id(3, 5), 3)])
    _check_features(view, [Play(1, tiles.tile_id(1, 6), 6), Play(1, tiles.tile_id(1, 2), 1)])
    _check_features(public_view(env.state_obj, env.config, 1), [Play(2, tiles.tile_id(0, 2), 2)])


def _model_arrays(players: int, max_pips: int = 12, hidden: int = 3) -> dict[str, Any]:
    """A small hand model with non-zero biases (seeded)."""
    rng = np.random.default_rng(11)
    return {
        "w1": rng.normal(size=(feature_count(players), hidden)).astype(np.float32),
        "b1": rng.normal(size=hidden).astype(np.float32),
        "w2": rng.normal(size=hidden).astype(np.float32),
        "b2": np.float32(0.7),
        "players": np.int64(players),
        "max_pips": np.int64(max_pips),
    }


def test_log_probs_are_the_documented_network_softmaxed_over_the_allowed_places() -> None:
    """``log(share) + relu(x W1 + b1) w2 + b2``, softmax over each tile's allowed places;
    a disallowed place has probability 0; a tile allowed nowhere gets a uniform row."""
    arrays = _model_arrays(2)
    model = HandModel(arrays)
    rng = np.random.default_rng(5)
    feats = rng.uniform(0.0, 1.0, size=(4, 2, feature_count(2))).astype(np.float32)
    allowed = np.array([[True, True], [True, False], [False, True], [False, False]])
    got = model.log_probs(feats, allowed)
    share = FEATURE_NAMES.index("hand_share")
    for u in range(4):
        logits = [
            math.log(max(float(feats[u, col, share]), 1e-6))
            + float(np.maximum(feats[u, col] @ arrays["w1"] + arrays["b1"], 0.0) @ arrays["w2"])
            + 0.7
            for col in range(2)
        ]
        ok = [col for col in range(2) if allowed[u, col]] or [0, 1]
        if not allowed[u].any():
            logits = [0.0, 0.0]
        norm = math.log(sum(math.exp(logits[c]) for c in ok))
        for col in range(2):
            want = logits[col] - norm if col in ok else -math.inf
            assert got[u, col] == pytest.approx(want, rel=1e-5, abs=1e-5), (u, col)
    assert np.allclose(np.exp(got).sum(axis=1), 1.0)


def test_place_log_probs_put_each_opponent_in_its_absolute_column() -> None:
    """Seat 1 of 3 observes: the network's places (seat 0, seat 2, the boneyard) land in
    absolute columns 0, 2 and 3; the observer's own column is -inf."""
    env = deal_env([["6-0", "0-1"], ["6-1", "1-3"], ["6-2", "2-3"]], max_pips=12, first_player=1)
    view = public_view(env.state_obj, env.config, 1)
    model = HandModel(_model_arrays(3))
    feats, allowed, unseen = tile_features(view, [])
    logp = model.log_probs(feats, allowed)
    got = LearnedModel(model, 1.0).place_log_probs(view, [])
    assert got.shape == (len(unseen), 4)
    assert np.array_equal(got[:, [0, 2, 3]], logp)
    assert np.isneginf(got[:, 1]).all()


def test_bad_shapes_and_numbers_are_refused_naming_the_problem(tmp_path: Path) -> None:
    good = _model_arrays(4)
    with pytest.raises(ValueError, match="do not fit"):
        HandModel({**good, "b1": good["b1"][:-1]})
    with pytest.raises(ValueError, match=r"^hand model arrays hold non-finite numbers$"):
        HandModel({**good, "b1": np.full_like(good["b1"], np.nan)})
    with pytest.raises(ValueError, match=r"alpha must be >= 0, got -1.0"):
        LearnedModel(HandModel(good), -1.0)
    path = tmp_path / "b1.npz"
    np.savez(path, **{**good, "b1": good["b1"][:-1]})
    with pytest.raises(ValueError, match=r"b1: shape"):
        HandModel.load(path)


@pytest.mark.parametrize(("players", "max_pips"), [(2, 6), (8, 18)])
def test_models_of_the_extreme_tables_load(tmp_path: Path, players: int, max_pips: int) -> None:
    """R1/R3: 2 to 8 players, double-6 to double-18, the bounds included."""
    path = tmp_path / "m.npz"
    HandModel(_model_arrays(players, max_pips)).save(path)
    model = HandModel.load(path)
    assert (model.players, model.max_pips) == (players, max_pips)


@pytest.mark.parametrize(("players", "max_pips"), [(9, 12), (1, 12), (4, 5), (4, 19)])
def test_models_past_the_tables_are_refused(tmp_path: Path, players: int, max_pips: int) -> None:
    path = tmp_path / "m.npz"
    np.savez(path, **{**_model_arrays(4), "players": np.int64(players), "max_pips": np.int64(max_pips)})
    with pytest.raises(ValueError, match=f"a model for {players} players, double-{max_pips}"):
        HandModel.load(path)


def test_a_w1_header_past_the_size_cap_is_refused(tmp_path: Path) -> None:
    """A hand model's arrays hold at most 2**22 values each; the header says so first."""
    rows = feature_count(4)
    path = _huge_w1(tmp_path, _model_arrays(4), shape=(rows, (1 << 22) // rows + 1))
    with pytest.raises(ValueError, match=r"w1: shape .*: more than 4194304 values"):
        HandModel.load(path)


def test_a_table_without_a_hand_model_says_how_to_train_one() -> None:
    with pytest.raises(ValueError, match=r"double-12: train one with python -m training\.hand_model$"):
        hand_model_path(mtrain_env.raw_env(num_players=3).config)


# --------------------------------------------------------------------------- greedy


def _choice(env: mtrain_env.raw_env, agent: GreedyAgent | PlannerAgent) -> str:
    """The agent's move for the seat on turn, as text with absolute trains."""
    action = agent.act(decision_for(env, env.agent_selection))
    d = env.decode_action(action)
    assert d.tile is not None and d.train is not None
    n = env.config.num_players
    where = "mex" if d.train == n else str((env.agent_name_mapping[env.agent_selection] + d.train) % n)
    return f"{min(d.tile)}-{max(d.tile)} @{where}"


def test_greedy_prefers_its_own_train_over_a_lower_action_id_of_equal_value() -> None:
    """Seat 1 could not open (R10: marker). Seat 0 (own end 4) holds 2-4 (own train) and
    0-6 (seat 1's marked train or the Mexican train), both worth 6: its own train first,
    though 0-6 has the lower action ids."""
    env = deal_env([["6-1", "1-4", "2-4", "0-6"], ["1-2", "3-5", "0-0"]], hand_size=4)
    act(env, "1-6 @0", "1-4 @0", "PASS", "PASS")
    assert env.encode_action((0, 6), 1) < env.encode_action((2, 4), 0)
    assert _choice(env, GreedyAgent()) == "2-4 @0"


def test_greedy_breaks_a_tie_off_its_train_by_the_lowest_action_id() -> None:
    """0-6 fits seat 1's marked empty train and the Mexican train (same value, neither the
    own train): the lowest relative action id, seat 1's train (relative train 1)."""
    env = deal_env([["6-1", "1-4", "0-6", "5-5"], ["1-2", "3-5", "0-0"]], hand_size=4)
    act(env, "1-6 @0", "1-4 @0", "PASS", "PASS")
    assert _choice(env, GreedyAgent()) == "0-6 @1"


# --------------------------------------------------------------------------- features


def test_the_env_feature_set_is_the_observation_as_is() -> None:
    env = deal_env([["6-1", "1-4"], ["1-2", "3-5"]])
    decision = decision_for(env, env.agent_selection)
    encoder = FeatureEncoder()
    assert encoder.name == "env"
    assert encoder(decision) is decision.observation
    assert feature_size("env", env.config, 17) == 17
    assert feature_size("planner", env.config, 17) == 17 + env.config.num_actions + env.config.num_tiles


def test_the_chain_feature_follows_each_tables_set_and_blank_values() -> None:
    """One encoder over two tables: the chain bits are the longest chain of each table's
    own set; with ``blank_penalty`` (a blank worth 25) 0-6 outweighs 5-6 as a one-tile chain."""
    encoder = FeatureEncoder("planner")

    def chain_bits(env: mtrain_env.raw_env) -> list[int]:
        decision = decision_for(env, env.agent_selection)
        x = encoder(decision)
        return np.flatnonzero(x[len(x) - env.config.num_tiles :]).tolist()

    plain = deal_env([["6-5", "6-0", "1-1"], ["2-3"]])
    assert chain_bits(plain) == [plain.config.tiles.tile_id(5, 6)]
    blanks = deal_env([["6-5", "6-0", "1-1"], ["2-3"]], blank_penalty=True)
    assert chain_bits(blanks) == [blanks.config.tiles.tile_id(0, 6)]
    nine = deal_env([["9-5", "5-8", "1-1"], ["2-3"]], max_pips=9)
    tiles9 = nine.config.tiles
    assert sorted(chain_bits(nine)) == sorted([tiles9.tile_id(5, 9), tiles9.tile_id(5, 8)])


# --------------------------------------------------------------------------- history


class _ScriptedRng:
    """A stand-in for the walk's random stream: ``choice`` returns the given index pairs in
    turn, ``random`` the given uniforms in turn."""

    def __init__(self, pairs: list[tuple[int, int]], uniforms: list[float]) -> None:
        self.pairs = list(pairs)
        self.uniforms = list(uniforms)

    def choice(self, n: int, k: int, replace: bool = True) -> np.ndarray:
        assert k == 2 and not replace
        return np.array(self.pairs.pop(0))

    def random(self) -> float:
        return self.uniforms.pop(0)


def _started_sampler(steps: int = 3, thin: int = 3) -> tuple[mtrain_env.raw_env, HistorySampler]:
    """A sampler of seat 0 started at its first decision of a 3-seat scripted round."""
    env = deal_env([["6-0", "0-1", "5-5"], ["6-1", "6-4", "3-3"], ["6-2", "2-3", "4-4"]])
    sampler = HistorySampler(env.game, env.codec, 0, steps, thin, np.random.default_rng(0))
    sampler.start(decision_for(env, env.agent_selection).view)
    return env, sampler


def _hand_built_history(sampler: HistorySampler, owners: dict[int, int]) -> None:
    """Replace the sampler's history by starting-hand slots ``owners`` (-1: the boneyard)."""
    sampler.owner = dict(owners)
    sampler.since = dict.fromkeys(owners, -1)
    sampler.played, sampler.played_by, sampler.pinned = {}, {}, set()
    sampler.banned = {1: 0, 2: 0}


def _walk_state(sampler: HistorySampler) -> tuple[dict[int, int], float, int, int]:
    """The owners, seat 1's energy and the accepted / proposed counters."""
    return sampler.owner, sampler.energy[1], sampler.accepted, sampler.proposed


def test_a_proposal_is_accepted_with_probability_min_1_exp_delta() -> None:
    """Metropolis-Hastings: a swap that lowers the log-likelihood by 1.5 is accepted when
    the uniform draw is below exp(-1.5) = 0.223 and refused above it; a swap that raises it
    always is. Two hidden tiles are enough to propose."""
    _env, sampler = _started_sampler()
    a, b = 10, 20
    _hand_built_history(sampler, {a: 1, b: -1})

    def log_likelihood(q: int) -> float:
        return -2.5 if sampler.owner[b] == 1 else -1.0

    sampler._log_likelihood = log_likelihood  # type: ignore[method-assign]
    sampler.energy = {1: -1.0, 2: 0.0}
    sampler.rng = _ScriptedRng([(0, 1)] * 3, [0.2, 0.25])  # type: ignore[assignment]
    sampler._propose([a, b])  # delta -1.5, u = 0.2 < 0.223: accepted
    assert _walk_state(sampler) == (
        {a: -1, b: 1},
        -2.5,
        1,
        1,
    )
    sampler._propose([a, b])  # delta +1.5: accepted without a draw
    assert _walk_state(sampler) == (
        {a: 1, b: -1},
        -1.0,
        2,
        2,
    )
    sampler._propose([a, b])  # delta -1.5, u = 0.25 > 0.223: refused, the swap undone
    assert _walk_state(sampler) == (
        {a: 1, b: -1},
        -1.0,
        2,
        3,
    )


def test_a_proposal_may_swap_an_opponents_starting_tile_with_its_drawn_one() -> None:
    """Two tiles of one opponent in different slots (its starting hand, its draw at time 2)
    are a real proposal (which tile was drawn); two of the same slot kind are no change
    and are not proposed."""
    _env, sampler = _started_sampler()
    a, b, c = 10, 20, 30
    _hand_built_history(sampler, {a: 1, b: 1, c: 1})
    sampler.since[b] = 2
    sampler._log_likelihood = lambda q: 0.0  # type: ignore[method-assign]
    sampler.energy = {1: 0.0, 2: 0.0}
    sampler.rng = _ScriptedRng([(0, 1), (0, 2)], [])  # type: ignore[assignment]
    sampler._propose([a, b, c])
    assert (sampler.since[a], sampler.since[b], sampler.proposed) == (2, -1, 1)
    sampler._propose([a, b, c])  # a (now the draw's slot) and c: still different slots
    assert (sampler.since[a], sampler.since[c], sampler.proposed) == (-1, 2, 2)
    sampler.rng = _ScriptedRng([(0, 1)], [])  # type: ignore[assignment]
    sampler._propose([a, b])  # a and b: both starting-hand slots of seat 1
    assert sampler.proposed == 2


def test_settle_keeps_every_thin_th_state_of_the_walk() -> None:
    """Three proposals (all accepted), thin 3: the one state kept is the walk's last."""
    _env, sampler = _started_sampler(steps=3, thin=3)
    a, b, c = 10, 20, 30
    _hand_built_history(sampler, {a: 1, b: 2, c: -1})
    sampler._log_likelihood = lambda q: 0.0  # type: ignore[method-assign]
    sampler.rng = _ScriptedRng([(0, 1), (0, 2), (1, 2)], [])  # type: ignore[assignment]
    sampler.settle(decision_for(_env, _env.agent_selection).view)
    assert sampler.owner == {a: -1, b: 2, c: 1}
    assert sampler.samples == [sampler.hands()]
    assert sampler.samples[0][1] == 1 << c and sampler.samples[0][2] == 1 << b


def test_only_the_starting_hand_is_bound_by_the_voids_and_a_played_tile_by_its_play() -> None:
    """``_fits``: a tile the seat has shown it lacks may not sit in its STARTING hand (slot
    from before time 0), but may in a draw's slot (even one at time 0) or the boneyard; a
    played tile only in its player's slots from before the play."""
    _env, sampler = _started_sampler()
    sampler.banned = {1: 1 << 5, 2: 0}
    sampler.played, sampler.played_by = {7: 3}, {7: 2}
    assert not sampler._fits(5, 1, -1)
    assert sampler._fits(5, 1, 0) and sampler._fits(5, -1, -1) and sampler._fits(5, 2, -1)
    assert sampler._fits(4, 1, -1) and sampler._fits(6, 1, -1)
    assert sampler._fits(7, 2, 2) and sampler._fits(7, 2, -1)
    assert not sampler._fits(7, 2, 3) and not sampler._fits(7, 1, 0) and not sampler._fits(7, -1, -1)


def test_the_repaired_history_makes_every_observed_move_possible() -> None:
    """Started at seat 0's last decision of its opening (time 0), the history then hears
    each opponent open: every move is one the history's hand could make (no move scored
    as impossible, R15/R16), the first one included."""
    env = deal_env([["6-0", "0-1", "5-5"], ["6-1", "6-4", "3-3"], ["6-2", "2-3", "4-4"]])
    act(env, "0-6 @0", "0-1 @0")
    sampler = HistorySampler(env.game, env.codec, 0, 5, 1, np.random.default_rng(2))
    sampler.start(decision_for(env, env.agent_selection).view)
    for move in ["PASS", "1-6 @1", "PASS", "2-6 @2", "2-3 @2", "PASS"]:
        before = env.state_obj.copy()
        act(env, move)
        sampler.observe(next(m for m in env.game.legal_moves(before) if _applies(env, before, m)))
    for q in (1, 2):
        assert sampler._log_likelihood(q) > 3 * math.log(1e-4)


def _applies(env: mtrain_env.raw_env, before: Any, move: int) -> bool:
    """Whether the core ``move`` from ``before`` gives the env's public table now."""
    after = before.copy()
    env.game.apply(after, move)
    return after.trains == env.state_obj.trains and after.current == env.state_obj.current


def test_chains_accept_one_chain_and_as_many_chains_as_steps() -> None:
    env = deal_env([["6-0", "0-1"], ["6-1", "6-4"], ["6-2", "2-3"]])
    rng = np.random.default_rng(0)
    one = HistoryChains(env.game, env.codec, 0, 1, 5, 1, rng, eps=0.2)
    assert [w.steps for w in one.walks] == [5] and one.walks[0].eps == 0.2
    one.start(decision_for(env, env.agent_selection).view)
    assert one.worlds == []
    two = HistoryChains(env.game, env.codec, 0, 2, 2, 1, rng)
    assert [w.steps for w in two.walks] == [1, 1]


def test_the_history_factory_passes_every_knob_on() -> None:
    env = mtrain_env.raw_env(num_players=3)
    rng = np.random.default_rng(0)
    chains = history_factory(10, 2, 0.3, chains=2)(env.game, env.codec, 1, rng)
    assert isinstance(chains, HistoryChains)
    for walk in chains.walks:
        assert (walk.game, walk.codec, walk.seat, walk.steps, walk.thin, walk.eps) == (
            env.game,
            env.codec,
            1,
            5,
            2,
            0.3,
        )
    single = history_factory(10, 2, 0.3)(env.game, env.codec, 1, rng)
    assert isinstance(single, HistorySampler) and single.eps == 0.3


# --------------------------------------------------------------------------- chains


def test_chain_ends_lists_the_open_end_after_each_tile_r7() -> None:
    tiles = mtrain_env.raw_env(num_players=2, max_pips=6).config.tiles
    chain = (tiles.tile_id(6, 1), tiles.tile_id(1, 1), tiles.tile_id(1, 4))
    assert chain_ends(tiles, 6, chain) == [1, 1, 4]
    with pytest.raises(ValueError, match=r"^R7: tile \(2, 3\) does not match the open end$"):
        chain_ends(tiles, 6, (tiles.tile_id(6, 1), tiles.tile_id(2, 3)))


def test_a_solve_reports_the_chains_tiles_and_pips() -> None:
    """``(tiles, pips, chain)``: no tile, nothing; 6-1 1-2 from 6 is two tiles, 10 pips."""
    tiles = mtrain_env.raw_env(num_players=2, max_pips=6).config.tiles
    solver = ChainSolver(tiles)
    assert solver.solve(6, 0) == (0, 0, ())
    a, b = tiles.tile_id(6, 1), tiles.tile_id(1, 2)
    assert solver.solve(6, 1 << a | 1 << b) == (2, 10, (a, b))
    assert solver.solve(6, 1 << a) == (1, 7, (a,))


@pytest.mark.parametrize(
    ("limit", "length", "exact"), [(1, 1, False), (2, 2, False), (3, 2, True), (4, 2, True)]
)
def test_the_node_limit_counts_expanded_states(limit: int, length: int, exact: bool) -> None:
    """From 6 over 6-1 1-2 the search expands three states (the start, after 6-1, after
    1-2); with fewer allowed it keeps its best chain so far and says it is not exact;
    asked again, it answers the same, still not exact (an exact answer stays exact)."""
    tiles = mtrain_env.raw_env(num_players=2, max_pips=6).config.tiles
    solver = ChainSolver(tiles, node_limit=limit)
    hand = 1 << tiles.tile_id(6, 1) | 1 << tiles.tile_id(1, 2)
    first = solver.solve(6, hand)
    assert (first[0], solver.exact, solver.nodes) == (length, exact, 3 if limit >= 3 else limit + 1)
    assert solver.solve(6, hand) == first and solver.exact is exact


# --------------------------------------------------------------------------- planner

#: tiles for seat 1 that fit nothing here (it keeps more than ``danger`` tiles)
_FILLER = ["0-0", "1-1", "0-1"]


def test_planner_lays_a_chain_tile_elsewhere_when_that_costs_no_more_than_its_head() -> None:
    """Own end 2, chain 2-4 4-5, Mexican end 5. 2-4 on the own train costs the chain one
    tile; so does 4-5 on the Mexican train (its last tile): equal damage, so the play off
    the own train (the ``off_own`` criterion) goes first."""
    env = deal_env([["6-2", "6-5", "2-4", "4-5"], ["6-3", "3-5", *_FILLER]])
    act(env, "2-6 @0", "PASS", "3-6 @1", "PASS", "5-6 @mex", "3-5 @1")
    assert _choice(env, PlannerAgent()) == "4-5 @mex"


@pytest.mark.parametrize(("blank_penalty", "expected"), [(False, "4-5 @mex"), (True, "0-5 @mex")])
def test_planner_sheds_the_heavier_extra_by_the_tables_values_r2(blank_penalty: bool, expected: str) -> None:
    """Extras 0-5 and 4-5 both fit the Mexican train (end 5), neither touches the chain
    (1-2 from the own end 2): the heavier goes, 4-5 (9 pips), or with ``blank_penalty``
    0-5 (a blank is worth 25)."""
    env = deal_env(
        [["6-2", "6-5", "2-1", "0-5", "4-5"], ["6-3", "3-3", "3-4", *_FILLER]],
        blank_penalty=blank_penalty,
    )
    act(env, "2-6 @0", "PASS", "3-6 @1", "PASS", "5-6 @mex", "3-3 @1", "3-4 @1")
    assert _choice(env, PlannerAgent()) == expected


def test_planner_params_name_the_node_limit_only_when_set() -> None:
    assert PlannerAgent().params() == {"danger": 2}
    assert PlannerAgent(danger=4, node_limit=500).params() == {"danger": 4, "node_limit": 500}


def test_planner_opens_with_the_chain_of_each_tables_set_and_values_r9() -> None:
    """One planner over three tables: the one-tile chains 5-6 and 0-6 weigh 11 and 6 pips,
    or 11 and 31 with ``blank_penalty``; on a double-9 table the chain is 9-5 5-8. Its
    node budget reaches the search."""
    planner = PlannerAgent(node_limit=7)
    plain = deal_env([["6-5", "6-0", "1-1"], ["2-3"]])
    assert _choice(plain, planner) == "5-6 @0"
    blanks = deal_env([["6-5", "6-0", "1-1"], ["2-3"]], blank_penalty=True)
    assert _choice(blanks, planner) == "0-6 @0"
    assert planner.solver(decision_for(blanks, blanks.agent_selection)).node_limit == 7
    nine = deal_env([["9-5", "5-8", "9-1", "1-1"], ["2-3"]], max_pips=9)
    assert _choice(nine, planner) == "5-9 @0"
