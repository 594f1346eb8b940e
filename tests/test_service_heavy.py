"""Heavy reads never reach the games' clocks: benchmarks/heavy_reads.py, smaller, in CI.

The real `runner serve` (a subprocess) over a SQLite database holding a large synthetic
round-robin plays the bundled engine against its v1 at a short time control while six
clients read the round-robin's ``report.html`` over and over, and a game is added to that
round-robin every second (so the page cannot simply be served from the cache: it is built
again and again). Asserted: no live game was lost on time, games were played meanwhile, the
readers (one address) were held to the per-client cap (429) and never got a 5xx.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

import pytest

pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")

from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location("heavy_reads", REPO / "benchmarks" / "heavy_reads.py")
assert _spec is not None and _spec.loader is not None
heavy_reads = importlib.util.module_from_spec(_spec)
sys.modules["heavy_reads"] = heavy_reads
_spec.loader.exec_module(heavy_reads)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_report_readers_cause_no_time_forfeit() -> None:
    """Six report.html readers of a 30,000-game round-robin while a 1+0.02 match plays."""
    args = argparse.Namespace(games=30_000, readers=6, seconds=20.0, warmup=2.0, probe=0.1,
                              grow=1.0, tc="1+0.02", maxmoves=30, read="report.html")
    figures = heavy_reads.measure(REPO, args)
    for line in heavy_reads.summary(figures):
        print(line)
    assert figures.games, "no live game finished while the readers read"
    forfeits = [g for g in figures.games if g["termination"] == "time forfeit"]
    assert forfeits == [], forfeits
    assert figures.reads[200] > 0, dict(figures.reads)
    assert figures.reads[429] > 0, "six readers from one address were never held back"
    assert not [code for code in figures.reads if code >= 500 or code == 0], dict(figures.reads)
