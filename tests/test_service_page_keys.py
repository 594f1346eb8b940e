"""The page's script reads only keys the service's payload models declare.

The script is read as text: each ``name.key`` it writes on a value that came from the API or
the event stream (a summary ``t``, a detail, a board, an event's ``data``, ...) must be a field
of the models that value can be. A key the service does not declare (or one renamed on one
side only) fails here instead of leaving a blank cell on the page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")

from pydantic import BaseModel

from runner.report.tree import (
    EloLineJson,
    LlrLineJson,
    ReportJson,
    SeriesJson,
    SprtReportJson,
    StandingJson,
)
from runner.service import payloads

STATIC = Path(payloads.__file__).resolve().parent / "static"

EVENTS = tuple(payloads.event_kinds().values())
BOARDS = (payloads.BoardState, payloads.MoveEvent, payloads.GameStartedEvent)

READS: dict[str, tuple[type[BaseModel], ...]] = {
    # page.js
    "t": (payloads.TournamentSummary,),
    "created": (payloads.Submitted,),
    "detail": (payloads.SnapshotEvent, payloads.ProblemsBody, payloads.ErrorBody),
    "report": (ReportJson,),
    "sprt": (SprtReportJson,),
    "data": (payloads.TournamentList, *EVENTS),
    "move": (payloads.MoveEvent,),
    "result": (payloads.GameFinishedEvent,),
    "game": BOARDS,
    "fields": BOARDS,
    "board": (),  # the script's own BoardView object, not a payload
    # draw.js
    "series": (SeriesJson,),
    "llr": (LlrLineJson,),
}
"""Each variable of the scripts that holds a payload, and the models it can be."""

SCRIPT_OWN = {"game": {"ply", "last_move", "last_uci"}, "fields": set()}
"""Keys the script sets itself on a board it keeps (merged from moves), besides the payloads'."""

NOT_KEYS = {"length", "map", "forEach", "some", "filter", "concat", "join", "push"}
"""Methods and properties of JavaScript arrays (``data`` is also the stream parser's lines)."""


def _fields(models: tuple[type[BaseModel], ...]) -> set[str]:
    return {name for model in models for name in model.model_fields}


@pytest.mark.parametrize("script", ["page.js", "draw.js"])
def test_the_page_script_reads_only_declared_keys(script: str) -> None:
    text = (STATIC / script).read_text(encoding="utf-8")
    undeclared: list[str] = []
    checked = 0
    for variable, key in re.findall(r"\b([a-z]+)\.([a-z_][a-z0-9_]*)\b", text):
        models = READS.get(variable)
        if not models:
            continue
        checked += 1
        if key in _fields(models) or key in SCRIPT_OWN.get(variable, set()):
            continue
        if key in NOT_KEYS:
            continue
        undeclared.append(f"{variable}.{key}")
    assert checked >= 10, checked  # the scan found the script's reads
    assert not undeclared, sorted(set(undeclared))


def test_the_series_lines_and_standings_are_declared() -> None:
    """draw.js's Elo lines (``s.label``, ``s.elo``...) and page.js's standings rows (``s.rank``
    ...) share the variable ``s``: each key it reads is a field of one of the two."""
    keys: set[str] = set()
    for script in ("page.js", "draw.js"):
        keys |= set(re.findall(r"\bs\.([a-z_][a-z0-9_]*)\b",
                               (STATIC / script).read_text(encoding="utf-8")))
    assert keys, "no s.key found"
    assert keys <= _fields((StandingJson, EloLineJson)), keys - _fields((StandingJson, EloLineJson))
