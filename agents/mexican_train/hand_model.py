"""A learned model of where the hidden tiles are, for weighting determinized worlds.

The chain-keeping model of :mod:`agents.mexican_train.inference` scores only the tile a
seat laid on its own train; most of what the table shows (which ends each opponent's
train offers, its hand count, its marker, the tiles it laid this round) it ignores. This
model reads all of that: for each tile the seat cannot see and each place it may be
(an opponent's hand or the boneyard), a small network scores a vector of public features
of the pair (:func:`tile_features`), and a softmax over the places the shown voids allow
gives ``p(tile in place)``. It is trained on the true hands of planner games
(``python -m training.hand_model``: supervised, offline), the way Skat programs learn to
predict card locations (Solinas et al. 2019).

A world's log-weight is ``alpha`` times the sum over the hidden tiles of ``log p(tile in
the place the world puts it)`` (:class:`LearnedModel`, the ``scorer`` interface of
:class:`~agents.mexican_train.inference.OpponentModel`, so ``mc_infer`` and ``champion``
resample by it with ``model=learned``). Every world deals the same hand counts and
honours the same voids, so the prior's own count and void terms are the same in every
world and cancel: the product of the marginals is the whole correction, tempered by
``alpha`` because the tiles' places are not independent.

Reads only the seat's :class:`PublicView` and the plays the tracker attributed from the
seat's own views; nothing hidden. Files are ``.npz`` arrays (no pickle) checked on load.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from agents.mexican_train.base import table_file
from agents.mexican_train.inference import Play
from agents.policy_format import read_checked_npy
from mtrain_env.mexican_train.core.config import GameConfig
from mtrain_env.mexican_train.core.public import PublicView, banned_tiles
from mtrain_env.tilegame.files import os_error_text
from mtrain_env.tilegame.tiles import bits_list

__all__ = [
    "FEATURE_NAMES",
    "HAND_MODELS",
    "HandModel",
    "LearnedModel",
    "feature_count",
    "hand_model_path",
    "tile_features",
]

_POLICIES = Path(__file__).resolve().parent.parent / "policies"

#: the shipped hand models per table ``(players, N of double-N)`` (``training.hand_model``)
HAND_MODELS: dict[tuple[int, int], Path] = {
    (2, 12): _POLICIES / "hands_2p.npz",
    (4, 12): _POLICIES / "hands_4p.npz",
    (6, 12): _POLICIES / "hands_6p.npz",
}

#: the features of a (tile, place) pair, in order; then one-hot the opponent's seat
#: relative to the observer (1 .. n-1; all zero for the boneyard)
FEATURE_NAMES = (
    "boneyard",  # the place is the boneyard
    "matches_own_end",  # the tile matches the open end of the opponent's own train
    "own_started",  # the opponent's train has left the station
    "matches_started_own_end",  # both of the above
    "matches_mexican_end",  # the tile matches the Mexican train's open end
    "open_ends_matched",  # share of the trains whose open end the tile matches
    "double",
    "value",  # pips / (2 N)
    "hand_share",  # the place's tiles / the hidden tiles
    "boneyard_share",  # boneyard tiles / the hidden tiles
    "marked",  # the opponent's train carries a marker
    "rivals_on_own_end",  # hidden tiles matching the opponent's own end / 10
    "plays_seen",  # tiles the opponent was seen laying on its own train this round / 5
    "matches_laid_pips",  # the tile has a pip the opponent's own-train plays passed through
    "table_share",  # tiles on the table / the set
    "own_length",  # tiles on the opponent's own train / 10
    "first_turn_done",  # the opponent has had its first turn (R9-R13)
    "matches_own_end_after_opening",  # matches_own_end once the opponent has had its first turn
)


def feature_count(num_players: int) -> int:
    """Features of one (tile, place) pair at an ``num_players`` table."""
    return len(FEATURE_NAMES) + num_players - 1


def hand_model_path(config: GameConfig) -> Path:
    """The shipped hand model of ``config``'s table; ``ValueError`` naming those that have one."""
    return table_file(HAND_MODELS, config, "hand models", "train one with python -m training.hand_model")


def tile_features(view: PublicView, plays: list[Play]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """``(features, allowed, unseen)`` of ``view``: ``features[u, l]`` (float32) of hidden tile
    ``unseen[u]`` in place ``l``, ``allowed[u, l]`` whether the shown voids let it be there.
    Places ``l``: the opponents in absolute seat order (the observer skipped), then the
    boneyard."""
    config = view.config
    tiles = config.tiles
    n = config.num_players
    seat = view.seat
    unseen = bits_list(view.unseen)
    hidden = max(1, len(unseen))
    pips = np.array([tiles.tiles[t] for t in unseen], np.int64).reshape(-1, 2)
    lo, hi = pips[:, 0], pips[:, 1]
    opponents = [q for q in range(n) if q != seat]
    ends = np.array(view.ends, np.int64)
    matches = (lo[:, None] == ends[None]) | (hi[:, None] == ends[None])  # (U, trains)
    mexican = matches[:, n].astype(np.float32)
    open_ends = matches.mean(axis=1, dtype=np.float32)
    double = (lo == hi).astype(np.float32)
    value = (lo + hi).astype(np.float32) / (2 * config.max_pips)
    boneyard_share = view.boneyard_count / hidden
    table_share = view.table.bit_count() / config.num_tiles
    laid: dict[int, int] = {}  # per opponent, a pip mask of the ends its plays passed through
    seen: dict[int, int] = {}
    width = config.max_pips + 1
    for p in plays:
        laid[p.seat] = laid.get(p.seat, 0) | 1 << p.end | 1 << tiles.other_end[p.tile * width + p.end]
        seen[p.seat] = seen.get(p.seat, 0) + 1
    column = {name: i for i, name in enumerate(FEATURE_NAMES)}
    shared = {  # the tile's own features, the same in every place
        "matches_mexican_end": mexican,
        "open_ends_matched": open_ends,
        "double": double,
        "value": value,
        "boneyard_share": boneyard_share,
        "table_share": table_share,
    }

    feats = np.zeros((len(unseen), n, feature_count(n)), np.float32)
    allowed = np.ones((len(unseen), n), np.bool_)
    for col, q in enumerate(opponents):
        own = matches[:, q].astype(np.float32)
        started = float(len(view.trains[q]) > 0)
        opened = float(view.first_turn_done[q])
        mask = laid.get(q, 0)
        values = {
            **shared,
            "matches_own_end": own,
            "own_started": started,
            "matches_started_own_end": own * started,
            "hand_share": view.hand_counts[q] / hidden,
            "marked": float(view.markers[q]),
            "rivals_on_own_end": own.sum() / 10.0,
            "plays_seen": seen.get(q, 0) / 5.0,
            "matches_laid_pips": ((mask >> lo & 1) | (mask >> hi & 1)).astype(np.float32),
            "own_length": len(view.trains[q]) / 10.0,
            "first_turn_done": opened,
            "matches_own_end_after_opening": own * opened,
        }
        for name, v in values.items():
            feats[:, col, column[name]] = v
        feats[:, col, len(FEATURE_NAMES) + (q - seat) % n - 1] = 1.0
        banned = banned_tiles(view, q)
        allowed[:, col] = [not banned >> t & 1 for t in unseen] if view.hand_counts[q] else False
    boneyard = {**shared, "boneyard": 1.0, "hand_share": boneyard_share}
    for name, v in boneyard.items():
        feats[:, n - 1, column[name]] = v
    allowed[:, n - 1] = view.boneyard_count > 0
    return feats, allowed, unseen


#: the arrays of a hand model file (``.npz`` members ``<name>.npy``)
HAND_MODEL_ARRAYS = ("w1", "b1", "w2", "b2", "players", "max_pips")


def _check_members(names: set[str]) -> None:
    """Refuse an archive that does not hold exactly the six arrays, naming what is missing
    and (the first three of) what is extra."""
    expected = {f"{k}.npy" for k in HAND_MODEL_ARRAYS}
    missing, extra = sorted(expected - names), sorted(names - expected)
    problems = [f"missing arrays {missing}"] if missing else []
    if extra:
        more = f" and {len(extra) - 3} more" if len(extra) > 3 else ""
        problems.append(f"unexpected members {extra[:3]}{more}")
    if problems:
        raise ValueError(f"{'; '.join(problems)} (a hand model holds {sorted(expected)})")


def _member(
    zf: zipfile.ZipFile, name: str, shape: tuple[int | None, ...], dtype: np.dtype[Any]
) -> np.ndarray:
    """One array of a hand model file, its header checked before its data is read."""
    with zf.open(f"{name}.npy") as f:
        try:
            return read_checked_npy(f, shape, dtype, max_elements=1 << 22)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None


def count_offset(features: np.ndarray) -> np.ndarray:
    """``log`` of each place's share of the hidden tiles (its ``hand_share``): the logits of
    uniform deals, which the network corrects (it starts from the counts-only prior)."""
    return np.log(np.maximum(features[..., FEATURE_NAMES.index("hand_share")], 1e-6)).astype(np.float64)


class HandModel:
    """The network: ``log(share) + relu(x W1 + b1) w2 + b2``, a logit per (tile, place) shared
    by all pairs (:func:`count_offset`: a correction of uniform deals).

    Args:
        arrays: ``w1`` (F, H), ``b1`` (H,), ``w2`` (H,), ``b2`` (), ``players`` (), ``max_pips`` ().
    """

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        missing = {"w1", "b1", "w2", "b2", "players", "max_pips"} - set(arrays)
        if missing:
            raise ValueError(f"a hand model file needs the arrays {sorted(missing)}")
        self.players = int(arrays["players"])
        self.max_pips = int(arrays["max_pips"])
        self.w1 = np.asarray(arrays["w1"], np.float32)
        self.b1 = np.asarray(arrays["b1"], np.float32)
        self.w2 = np.asarray(arrays["w2"], np.float32)
        self.b2 = float(arrays["b2"])
        f, h = self.w1.shape
        if f != feature_count(self.players) or self.b1.shape != (h,) or self.w2.shape != (h,):
            raise ValueError(
                f"hand model arrays do not fit a {self.players}-player model: w1 {self.w1.shape}, "
                f"b1 {self.b1.shape}, w2 {self.w2.shape} (expected {feature_count(self.players)} features)"
            )
        if not all(np.isfinite(a).all() for a in (self.w1, self.b1, self.w2)) or not np.isfinite(self.b2):
            raise ValueError("hand model arrays hold non-finite numbers")

    @classmethod
    def load(cls, path: str | Path) -> HandModel:
        """A model saved by :meth:`save` (``.npz``, no pickle), read strictly: exactly its six
        arrays, each header checked (dtype, shape, size) before its data, the table in range;
        ``ValueError`` naming the file and the problem, a file that cannot be read included
        (``FileNotFoundError`` if missing)."""
        try:
            with zipfile.ZipFile(path) as zf:
                _check_members(set(zf.namelist()))
                table = {k: _member(zf, k, (), np.dtype("<i8")) for k in ("players", "max_pips")}
                players, max_pips = int(table["players"]), int(table["max_pips"])
                if not (2 <= players <= 8 and 6 <= max_pips <= 18):
                    raise ValueError(f"a model for {players} players, double-{max_pips} (R1, R3: 2-8, 6-18)")
                w1 = _member(zf, "w1", (feature_count(players), None), np.dtype("<f4"))
                hidden = w1.shape[1]
                arrays = {
                    **table,
                    "w1": w1,
                    "b1": _member(zf, "b1", (hidden,), np.dtype("<f4")),
                    "w2": _member(zf, "w2", (hidden,), np.dtype("<f4")),
                    "b2": _member(zf, "b2", (), np.dtype("<f4")),
                }
            return cls(arrays)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as err:
            raise ValueError(f"{path}: not a hand model file ({err})") from None
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None
        except FileNotFoundError:
            raise
        except OSError as err:  # a directory, permissions, an I/O error
            raise ValueError(f"{path}: cannot read it ({os_error_text(err)})") from None

    def save(self, path: str | Path | IO[bytes]) -> None:
        np.savez(
            path, w1=self.w1, b1=self.b1, w2=self.w2, b2=np.float32(self.b2),
            players=np.int64(self.players), max_pips=np.int64(self.max_pips),
        )  # fmt: skip

    def check(self, config: GameConfig) -> None:
        """``ValueError`` unless the model was trained for ``config``'s table."""
        if (self.players, self.max_pips) != (config.num_players, config.max_pips):
            raise ValueError(
                f"the hand model was trained for {self.players} players, double-{self.max_pips}; "
                f"this game has {config.num_players} players, double-{config.max_pips}"
            )

    def log_probs(self, features: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """``log p(tile u in place l)``: softmax over each tile's allowed places ((U, L) float64;
        ``-inf`` where not allowed; a tile allowed nowhere gets a uniform row)."""
        h = np.maximum(features @ self.w1 + self.b1, 0.0)
        logits = (h @ self.w2 + self.b2).astype(np.float64) + count_offset(features)
        logits = np.where(allowed, logits, -np.inf)
        nowhere = ~allowed.any(axis=1)
        logits[nowhere] = 0.0
        top = logits.max(axis=1, keepdims=True)
        return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))


class LearnedModel:
    """Worlds weighted by a :class:`HandModel` (the ``scorer`` interface of ``OpponentModel``).

    Args:
        model: the hand model of the game's table.
        alpha: the temper of the log-weights (0: every world alike).
    """

    def __init__(self, model: HandModel, alpha: float) -> None:
        if not alpha >= 0:
            raise ValueError(f"alpha must be >= 0, got {alpha}")
        self.model = model
        self.alpha = float(alpha)

    def place_log_probs(self, view: PublicView, plays: list[Play]) -> np.ndarray:
        """``(U, n + 1)``: log p of each hidden tile per ABSOLUTE seat, the boneyard last
        (the observer's own column is ``-inf``)."""
        feats, allowed, _ = tile_features(view, plays)
        logp = self.model.log_probs(feats, allowed)
        n = view.config.num_players
        out = np.full((logp.shape[0], n + 1), -np.inf)
        opponents = [q for q in range(n) if q != view.seat]
        out[:, opponents] = logp[:, : n - 1]
        out[:, n] = logp[:, n - 1]
        return out

    def scorer(self, view: PublicView, plays: list[Play]) -> Callable[[np.ndarray], np.ndarray]:
        """``owners -> alpha * sum_u log p(tile u where the world puts it)`` per world;
        ``owners[w, u]``: the seat holding hidden tile ``u`` in world ``w``, -1 the boneyard."""
        logp = self.place_log_probs(view, plays)
        n = view.config.num_players
        rows = np.arange(logp.shape[0])
        # a world the voids allow never lands on -inf; clip so that a rounding miss cannot NaN the weights
        logp = np.maximum(logp, -50.0)
        alpha = self.alpha

        def score(owners: np.ndarray) -> np.ndarray:
            places = np.where(owners < 0, n, owners)
            return alpha * logp[rows[None, :], places].sum(axis=1)

        return score
