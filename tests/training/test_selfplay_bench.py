"""``mtrain dev bench-selfplay``: the Ray paths (``selfplay/rayN``) beside the local one, with
their transport figures, and their refusals."""

from __future__ import annotations

import pytest

from training.app import main as mtrain


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        (["selfplay/ray0"], "--paths: unknown path 'selfplay/ray0'"),
        (["selfplay/rayx"], "--paths: unknown path 'selfplay/rayx'"),
        (["selfplay/ray3"], "--paths: selfplay/ray3: 3 collectors need at least 3 blocks of 64 games"),
    ],
)
def test_bad_ray_paths_are_one_line(
    capsys: pytest.CaptureFixture[str], paths: list[str], message: str
) -> None:
    assert mtrain(["dev", "bench-selfplay", "--games", "128", "--paths", *paths]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtrain dev bench-selfplay: {message}"), err
    assert err.count("\n") == 1


def test_the_ray_paths_print_their_rate_and_transport(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ray")
    argv = ["dev", "bench-selfplay", "--rounds", "1", "--games", "128", "--steps", "2"]
    assert mtrain([*argv, "--paths", "selfplay/tile", "selfplay/ray2"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in out[2:]}
    assert float(rows["selfplay/tile"][0].replace(",", "")) > 0
    assert out[4].split() == [
        "path",
        "vs",
        "selfplay/tile",
        "bytes/decision",
        "serialise",
        "ms/batch",
        "waited",
        "ms/update",
    ]
    ray2 = out[5].split()
    assert ray2[0] == "selfplay/ray2" and ray2[1].endswith("x")
    assert float(ray2[2].replace(",", "")) > 1000  # an observation row alone is over 1 KB
