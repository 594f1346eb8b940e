"""The report verb: one tournament's report, read through the store object."""

from __future__ import annotations

from runner.report.build import Report, ReportError, build_report
from runner.store.store import Store

__all__ = ["ReportError", "report"]


def report(store: Store, tournament_id: int | None = None) -> Report:
    """The report of one tournament (default: the newest); ReportError when there is none."""
    with store.report_rows() as rows:
        return build_report(rows, tournament_id)
