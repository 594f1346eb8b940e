"""Time to the first opening from the big books, ours beside python-chess's full parse.

Each of our measurements runs in a fresh Python process (nothing cached in the process; the
file itself may be in the OS page cache), timing ``open_book`` plus the cursor's first
``next()``, and separately the whole process including imports (median of ``--repeat``); the
peak Python heap (tracemalloc; the memory-mapped file is not heap) comes from one more run.
python-chess (a benchmark peer only) has no book index: to serve a random opening it must
parse every entry, so its figure is the full parse. That takes ~15 s for UHO, so by default it
is measured on a sample (the first 20,000 UHO lines, the first 2,000 PGN games) and scaled up
linearly (marked "est."); pass ``--peer`` to measure the full parse.

    python benchmarks/books_bench.py [--peer] [--repeat N] [--books DIR]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_BOOKS = REPO.parent / "shared" / "data" / "books"
BOOKS = ("UHO_4060_v3.epd", "8moves_v3.pgn")
SAMPLE_LINES = 20_000
SAMPLE_GAMES = 2_000

_CHILD = """
import json, sys, time, tracemalloc
started = time.perf_counter()
from runner.books.openings import OpeningCursor, open_book
imported = time.perf_counter()
if sys.argv[3] == "memory":
    tracemalloc.start()
book = open_book(sys.argv[1], plies=8)
opening = OpeningCursor(book, order=sys.argv[2], seed=1).next()
served = time.perf_counter()
peak = tracemalloc.get_traced_memory()[1] if tracemalloc.is_tracing() else 0
print(json.dumps({"first": served - imported, "total": served - started, "peak": peak,
                  "index": opening.index}))
"""


@dataclass(frozen=True)
class FirstOpening:
    """One fresh-process measurement of ours."""

    first: float
    total: float
    peak: int
    index: int


def _ours(path: Path, order: str, what: str = "time") -> FirstOpening:
    """One fresh process: ``what`` is "time" or "memory" (tracemalloc slows allocation)."""
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), order, what],
        capture_output=True, text=True, check=True, cwd=REPO, timeout=120,
    )
    data = json.loads(run.stdout)
    return FirstOpening(data["first"], data["total"], data["peak"], data["index"])


def _peer_parse(path: Path, full: bool) -> tuple[float, bool]:
    """Seconds python-chess needs to parse the whole book (measured, or estimated)."""
    import chess
    import chess.pgn

    started = time.perf_counter()
    if path.suffix == ".epd":
        total = parsed = 0
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.strip():
                    continue
                total += 1
                if full or parsed < SAMPLE_LINES:
                    chess.Board(line.strip())
                    parsed += 1
        elapsed = time.perf_counter() - started
        return (elapsed if full else elapsed * total / parsed), full
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    total = text.count("[Event ")
    handle_text = io.StringIO(text)
    parsed = 0
    started = time.perf_counter()
    while (full or parsed < SAMPLE_GAMES) and chess.pgn.read_game(handle_text) is not None:
        parsed += 1
    elapsed = time.perf_counter() - started
    return (elapsed if full else elapsed * total / max(parsed, 1)), full


def main() -> None:
    """Run the measurements and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", action="store_true", help="measure python-chess's full parse")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per figure")
    parser.add_argument("--books", type=Path, default=DEFAULT_BOOKS, help="folder of the books")
    options = parser.parse_args()

    print(f"{'book':<18} {'order':<10} {'first opening':>14} {'with import':>12} "
          f"{'peak mem':>9}   python-chess full parse")
    for name in BOOKS:
        path = options.books / name
        if not path.exists():
            print(f"{name:<18} absent ({path})")
            continue
        peer, measured = _peer_parse(path, options.peer)
        peer_text = f"{peer:.1f} s" + ("" if measured else " (est. from a sample)")
        for order in ("sequential", "random"):
            runs = [_ours(path, order) for _ in range(options.repeat)]
            first = statistics.median(run.first for run in runs)
            total = statistics.median(run.total for run in runs)
            peak = _ours(path, order, "memory").peak
            print(f"{name:<18} {order:<10} {first * 1000:>11.1f} ms {total * 1000:>9.1f} ms "
                  f"{peak / 1024:>6.0f} kB   {peer_text}")


if __name__ == "__main__":
    main()
