"""A real ``runner serve`` and Debian's chromium (Playwright), for the pages of issue 31: a
finished game replayed move by move, /docs without any external asset, and what the
tournament page says before its event stream connects.

One finished tournament (four fast games of the bundled engines) serves every test here.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_service_browser import CONFIG, _browser, _get, _serve, _submit, needs_chromium

chess = pytest.importorskip("chess")

QUICK = CONFIG.replace("rounds = 3", "rounds = 1").replace("tc = \"2+0.05\"", "tc = \"1+0.05\"")


def _wait_finished(base: str, tid: int, timeout: float = 120.0) -> dict[str, Any]:
    """Poll the tournament until it is finished (a generous bound: a loaded machine)."""
    deadline = time.monotonic() + timeout
    while True:
        with urllib.request.urlopen(f"{base}/api/tournaments/{tid}", timeout=30) as response:
            detail: dict[str, Any] = json.loads(response.read())
        if detail["status"] == "finished":
            return detail
        assert time.monotonic() < deadline, detail["status"]
        time.sleep(0.3)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A service with one finished tournament: (base URL, tournament id)."""
    tmp_path: Path = tmp_path_factory.mktemp("served")
    with _serve(tmp_path) as base:
        tid = _submit(base, QUICK)
        _wait_finished(base, tid)
        yield base, tid


_EXTERNAL = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?\s*"""
                       r"""(?:https?:)?//""", re.IGNORECASE)


def test_docs_loads_with_nothing_from_outside(finished: tuple[str, int]) -> None:
    # Issue 31: /docs was Swagger UI from a CDN, blank without internet.
    base, _ = finished
    status, headers, text = _get(base + "/docs")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert not _EXTERNAL.search(text), "an asset from another host"
    assert "cdn" not in text.lower()
    assert 'href="/openapi.json"' in text and "/api/tournaments/{tournament_id}/games/{index}" in text
    assert _get(base + "/openapi.json")[0] == 200
    assert _get(base + "/redoc")[0] == 404


@needs_chromium
def test_docs_page_in_a_browser_requests_only_this_origin(finished: tuple[str, int]) -> None:
    base, _ = finished
    requested: list[str] = []
    with _browser() as browser:
        page = browser.new_context().new_page()
        page.on("request", lambda request: requested.append(request.url))
        page.goto(base + "/docs")
        page.wait_for_selector("#routes tbody tr")
        assert page.locator("#routes tbody tr").count() >= 8
    assert requested and all(url.startswith(base) for url in requested), requested


@needs_chromium
def test_a_finished_game_is_replayed_move_by_move(finished: tuple[str, int]) -> None:
    # Issue 31: finished games could not be opened or replayed on the page.
    base, tid = finished
    with urllib.request.urlopen(f"{base}/api/tournaments/{tid}/games/0", timeout=30) as response:
        game = json.loads(response.read())
    errors: list[str] = []
    with _browser() as browser:
        page = browser.new_context(accept_downloads=True).new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # From the tournament page's list of finished games to the game.
        page.goto(f"{base}/tournaments/{tid}")
        page.click('#finished tbody tr[data-index="0"] a')
        page.wait_for_url(f"{base}/tournaments/{tid}/games/0")
        page.wait_for_selector("#g-moves tbody tr")
        assert page.locator("#g-moves tbody tr").count() == len(game["moves"])

        def shown_fen() -> str:
            return str(page.get_attribute("#g-board .board-card", "data-fen"))

        def placement(fen: str) -> str:
            return fen.split(" ")[0]

        # It opens on the final position; Home goes to the start, Right steps one ply.
        assert placement(shown_fen()) == placement(game["moves"][-1]["fen"])
        page.click("#g-first")
        assert placement(shown_fen()) == placement(game["start_fen"])
        board = chess.Board(game["start_fen"])
        for ply, move in enumerate(game["moves"][:6], start=1):
            page.click("#g-next")
            board.push_uci(move["uci"])
            assert placement(shown_fen()) == board.board_fen(), ply
            assert page.inner_text("#g-ply") == f"ply {ply} of {len(game['moves'])}"
            # The pieces drawn are the position's (the oracle's), square by square.
            drawn = page.eval_on_selector_all(
                "#g-board .sq", "squares => squares.map(s => s.textContent).join('')")
            assert sum(1 for ch in drawn if ch.strip()) == len(board.piece_map())
        page.click("#g-prev")
        board.pop()
        assert placement(shown_fen()) == board.board_fen()
        page.keyboard.press("End")
        assert placement(shown_fen()) == placement(game["moves"][-1]["fen"])
        page.click('#g-moves tbody tr[data-ply="2"]')
        assert placement(shown_fen()) == placement(game["moves"][1]["fen"])
        # Clocks and evals per move are in the table.
        first_row = page.inner_text('#g-moves tbody tr[data-ply="1"]')
        assert ":" in first_row  # a clock such as 0:01.0
        # The PGN link downloads this one game.
        with page.expect_download() as download:
            page.click("#game-pgn-link")
        text = Path(download.value.path()).read_text()
        assert text.count("[Event ") == 1
    assert errors == [], errors


@needs_chromium
def test_before_the_stream_connects_no_plot_says_no_finished_game(
        finished: tuple[str, int]) -> None:
    # Issue 31: before the page's script connected it said "no finished game yet" beside the
    # list of finished games. The event stream is held back here to see that state.
    base, tid = finished
    with _browser() as browser:
        page = browser.new_context().new_page()
        page.set_default_timeout(30_000)
        page.route("**/api/tournaments/*/events*", lambda route: None)  # never answered
        page.goto(f"{base}/tournaments/{tid}")
        page.wait_for_selector("#elo-plot svg")
        assert page.locator("#finished tbody tr").count() > 0
        for plot in ("#elo-plot", "#llr-plot"):
            text = page.inner_text(plot)
            assert "no finished game" not in text and "no SPRT" not in text, text
            assert "waiting for the event stream" in text
