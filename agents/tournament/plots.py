"""PNG plots of a tournament (matplotlib's Agg canvas: no display, no pyplot global state)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from agents.tournament.rating import Ratings
from mtrain_env.tilegame.files import atomic_path


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)  # Agg backend attached to this figure only
    return fig


def plot_penalty(
    agents: Sequence[dict[str, Any]],
    path: str | os.PathLike[str],
    title: str,
    measure: str = "mean penalty pips per round",
) -> None:
    """Each agent's mean cost (``measure``) with 95% CI error bars, one row per agent (best on top)."""
    rows = sorted(agents, key=lambda a: a["mean_penalty"]["mean"], reverse=True)
    fig = _figure(7.0, 1.2 + 0.45 * len(rows))
    ax = fig.add_subplot()
    ys = range(len(rows))
    means = [a["mean_penalty"]["mean"] for a in rows]
    # no interval (fewer than 2 deals) is drawn as a zero-width bar
    lo = [
        m - (a["mean_penalty"]["lo"] if a["mean_penalty"]["lo"] is not None else m)
        for a, m in zip(rows, means, strict=True)
    ]
    hi = [
        (a["mean_penalty"]["hi"] if a["mean_penalty"]["hi"] is not None else m) - m
        for a, m in zip(rows, means, strict=True)
    ]
    ax.errorbar(means, list(ys), xerr=[lo, hi], fmt="o", capsize=4, color="tab:blue")
    ax.set_yticks(list(ys), [a["agent"] for a in rows])
    ax.set_xlabel(f"{measure} (95% CI over duplicate deals)")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.margins(y=0.3)
    with atomic_path(path) as tmp:  # a PNG is whole or absent, also when interrupted
        fig.savefig(tmp, format="png")


def plot_ratings(ratings: Ratings, path: str | os.PathLike[str], title: str) -> None:
    """Plackett-Luce ``mu`` with a ``±sigma`` band for each agent over the rated games."""
    fig = _figure(7.0, 4.0)
    ax = fig.add_subplot()
    x = range(ratings.mu.shape[0])
    for i, label in enumerate(ratings.labels):
        mu, sigma = ratings.mu[:, i], ratings.sigma[:, i]
        (line,) = ax.plot(x, mu, label=label, linewidth=1.2)
        ax.fill_between(x, mu - sigma, mu + sigma, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel("games rated (deal, lineup, rotation order)")
    ax.set_ylabel("openskill Plackett-Luce mu ± sigma")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    with atomic_path(path) as tmp:  # a PNG is whole or absent, also when interrupted
        fig.savefig(tmp, format="png")
