"""The web table in a real browser: Debian's Chromium driven by Playwright (no browser
download), against a real uvicorn server. One test plays a full round against three agents
by clicking tiles, trains and the draw/pass buttons, and re-simulates the saved replay;
another opens a replay of a game between agents and steps through it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
sync_api = pytest.importorskip("playwright.sync_api")

from mtrain_env.replay import check_replay, read_replay  # noqa: E402
from tests.web_server import live_server  # noqa: E402
from training.app import main  # noqa: E402

CHROMIUM = os.environ.get("MTRAIN_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = os.environ.get("MTRAIN_WEB_SCREENSHOTS")  # a directory: save the README's pictures

if not shutil.which(CHROMIUM):
    pytest.skip(
        f"no Chromium at {CHROMIUM} (apt-get install chromium; `make test` does)", allow_module_level=True
    )


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[Any]:
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            args=ARGS,
            viewport={"width": 1500, "height": 860},
        )
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        yield page
        context.close()
    assert errors == [], errors


def test_play_a_full_round_against_three_agents(tmp_path: Path, browser_page: Any) -> None:
    page = browser_page
    with live_server(tmp_path / "replays") as (url, _app):
        page.goto(f"{url}/play")
        page.wait_for_selector("body[data-state=setup]")
        page.select_option("select.opponent >> nth=0", "planner")
        page.select_option("select.opponent >> nth=1", "greedy")
        page.select_option("select.opponent >> nth=2", "random")
        page.fill("#seed", "5")
        page.click("#start")
        page.wait_for_selector("body[data-state=ready], body[data-state=over]")
        moves = clicks = 0
        shot = False
        while page.get_attribute("body", "data-state") != "over":
            step = page.get_attribute("body", "data-step")
            if page.is_enabled("#draw"):
                page.click("#draw")
            elif page.is_enabled("#pass"):
                page.click("#pass")
            else:  # a tile, then a train it may go on (only legal ones are clickable)
                page.click("svg g.playable >> nth=0")
                assert page.locator("svg g.lane.target").count() >= 1
                if SCREENSHOTS and moves >= 8 and not shot:
                    page.locator("main").screenshot(path=f"{SCREENSHOTS}/web_play.png")
                    shot = True
                page.click("svg g.lane.target >> nth=0")
                clicks += 1
            page.wait_for_function(
                f"document.body.dataset.state !== 'busy' && document.body.dataset.step !== '{step}'"
            )
            moves += 1
        assert clicks > 0 and moves > 3
        text = page.inner_text("#message")
        assert text.startswith("Game over") and "Replay saved as" in text
        saved = list((tmp_path / "replays" / "played").glob("*.jsonl"))
        assert len(saved) == 1 and saved[0].name in text
        page.click("#replay-link")  # the viewer opens the game just played
        page.wait_for_selector("body[data-state=loaded]")
        assert page.locator("#files").input_value() == f"played/{saved[0].name}"
        replay = read_replay(saved[0])
        check_replay(replay)
        assert replay.agents == ["human", "planner", "greedy", "random"] and replay.final is not None
        assert sum(1 for s in replay.steps if s.seat == 0) == moves


def test_the_form_offers_only_the_agents_that_can_play_the_table(tmp_path: Path, browser_page: Any) -> None:
    """Changing the table asks the server again: a 4-player network (ppo) is offered at 4
    players, not at 3, and the seats' choices follow the player count."""
    page = browser_page
    offered = "[...document.querySelector('select.opponent').options].map((o) => o.value)"
    with live_server(tmp_path / "replays") as (url, _app):
        page.goto(f"{url}/play")
        page.wait_for_selector("body[data-state=setup]")
        assert page.locator("select.opponent").count() == 3 and "ppo" in page.evaluate(offered)
        labels = "[...document.querySelector('select.opponent').options].map((o) => o.text)"
        assert "oracle (cheats: sees every hand)" in page.evaluate(labels)  # labelled where chosen
        page.select_option("#players", "3")
        page.wait_for_function("document.querySelectorAll('select.opponent').length === 2")
        choices = page.evaluate(offered)
        assert "ppo" not in choices and {"planner", "champion", "random"} <= set(choices)
        page.select_option("#players", "4")
        page.wait_for_function("document.querySelectorAll('select.opponent').length === 3")
        assert "ppo" in page.evaluate(offered)


def test_open_a_tournament_replay_and_step_through_it(tmp_path: Path, browser_page: Any) -> None:
    page = browser_page
    argv = ["bench", "--agents", "mc", "planner", "greedy", "random", "--deals", "1", "--seed", "0"]
    argv += ["--agent-param", "mc.rollouts=8", "--out", str(tmp_path / "bench")]
    assert main([*argv, "--save-replays", str(tmp_path / "bench" / "replays")]) == 0
    files = sorted((tmp_path / "bench" / "replays").glob("*_r0_*.jsonl"))
    assert len(files) == 1  # the rotation with mc at seat 0
    name = f"replays/{files[0].name}"
    replay = read_replay(files[0])
    with live_server(tmp_path / "bench") as (url, _app):
        page.goto(f"{url}/viewer")
        page.wait_for_selector(f"#files option[value='{name}']", state="attached")
        page.select_option("#files", name)
        page.wait_for_selector("body[data-state=loaded]")
        assert page.get_attribute("body", "data-index") == "0"
        first = replay.steps[0]
        # numbered from 0, as `mtrain replay show` numbers them (#0)
        assert page.inner_text("#decision").startswith(f"decision #0: player_{first.seat} (")
        for k in range(1, 6):
            page.click("#next")
            assert page.get_attribute("body", "data-index") == str(k)
        # every hand is drawn, then one seat's view only
        assert page.locator("svg g.tile").count() > 4 * 10
        page.select_option("#seat", "1")
        page.wait_for_selector("body[data-state=loaded]")
        assert page.get_attribute("body", "data-index") == "5"
        page.click("#playpause")
        page.wait_for_function("Number(document.body.dataset.index) >= 8")
        page.click("#playpause")
        page.click("#last")
        assert page.get_attribute("body", "data-index") == str(len(replay.steps))
        assert "the game is over" in page.inner_text("#decision")
        assert "total" in page.inner_text("#scores")
        page.fill("#slider", "12")
        assert page.get_attribute("body", "data-index") == "12"
        annotated = next(i for i, s in enumerate(replay.steps) if s.annotations and s.seat == 0)
        page.select_option("#seat", "")
        page.wait_for_selector("body[data-state=loaded]")
        page.fill("#slider", str(annotated))
        notes = page.inner_text("#annotations")
        assert "values" in notes and "in pips" in notes and "higher is better" in notes
        assert "\u25c0 played" in notes and "the move played ranks" in notes
        if SCREENSHOTS:
            page.locator("main").screenshot(path=f"{SCREENSHOTS}/web_viewer.png")
