"""The request bodies the server accepts, as strict pydantic models.

Strict: a number sent as a string, a float where an int is due, a boolean for a seat, an
unknown key: each is refused with a 422 naming the field, before any game is touched.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from mtrain_env.mexican_train.core.config import MAX_PIPS, MIN_PIPS, MIN_PLAYERS, PRESETS

__all__ = ["MAX_WEB_PLAYERS", "MoveRequest", "NewGameRequest"]

MAX_SEED = 2**63 - 1
#: seats at the web table: R3's 8 of sets up to double-12. Bigger sets seat up to N - 1 in
#: the engine (``max_players``), but the play page has not been checked beyond 8 trains;
#: the guide's "Web table" section states this cap
MAX_WEB_PLAYERS = 8


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class NewGameRequest(_Strict):
    """A game against agents: the config, the human's seat, the other seats' agents."""

    num_players: int = Field(
        4, ge=MIN_PLAYERS, le=MAX_WEB_PLAYERS, description=f"seats (R3; at most {MAX_WEB_PLAYERS} here)"
    )
    max_pips: int = Field(12, ge=MIN_PIPS, le=MAX_PIPS, description="N of the double-N set (R1)")
    rules: str = Field("pagat", max_length=32, description=f"preset: one of {sorted(PRESETS)}")
    rounds: int = Field(1, ge=1, le=MAX_PIPS + 1, description="rounds of the session (R25)")
    seat: int = Field(0, ge=0, le=MAX_WEB_PLAYERS - 1, description="the human's seat")
    agents: list[str] = Field(
        default_factory=lambda: ["planner", "greedy", "random"],
        min_length=1,
        max_length=MAX_WEB_PLAYERS - 1,
        description="one registered agent per other seat, in seat order",
    )
    seed: int | None = Field(None, ge=0, le=MAX_SEED, description="the deal's seed (default: random)")


class MoveRequest(_Strict):
    """The human's move: its seat, the action id (the env's relative encoding), the step it
    was chosen at (a move chosen on a stale page is refused, never applied twice)."""

    seat: int = Field(ge=0, le=MAX_WEB_PLAYERS - 1)
    action: int = Field(ge=0, le=1_000_000)
    step: int = Field(ge=0, le=1_000_000)
