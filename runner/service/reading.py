"""What the service reads of its tournaments from the database, shared between readers.

Every page, stream and API call reads the same few things: the tournaments' progress (game
counts, status), a tournament's report, its newest finished games, its HTML report. They are
read once and shared (`runner.service.cache.SharedReads`) until a game finishes or the
status changes (`changed`), the heavy ones built off the event loop (`Offload`). The reason a
run failed is kept here too: this process's word first, the database's (which outlives a
restart) otherwise.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from runner.report.tree import ReportJson
from runner.service.cache import SharedReads
from runner.service.offload import Offload, finished_games, report_html, report_json
from runner.service.payloads import GameFinishedEvent
from runner.store.store import SERVICE, Store, TournamentProgress

__all__ = ["PROGRESS_AGE", "SNAPSHOT_GAMES", "TournamentReads", "one_line"]

log = logging.getLogger(__name__)

SNAPSHOT_GAMES = 200
"""Finished games a snapshot carries (the newest)."""
PROGRESS_AGE = 0.5
"""Seconds the tournaments' progress (game counts) read from the database is shared for."""


class TournamentReads:
    """The service's shared reads of the database, and the reasons its runs failed."""

    def __init__(self, store: Store, render_workers: int) -> None:
        self.store = store
        self._reads = SharedReads()
        self._offload = Offload(store, render_workers)
        self.reasons: dict[int, str | None] = {}
        """This process's word on why a run failed (the store's may lag)."""

    async def close(self) -> None:
        """Stop the workers that build reports."""
        await asyncio.to_thread(self._offload.close)

    def started(self) -> None:
        """A game started: the running counts are stale."""
        self._reads.drop("progress")

    def changed(self, tournament_id: int) -> None:
        """The tournament's stored games or status changed: shared reads are stale."""
        self._reads.drop("progress")
        self._reads.drop(("report", tournament_id))
        self._reads.drop(("html", tournament_id))
        self._reads.drop(("finished", tournament_id, SNAPSHOT_GAMES))

    async def all_progress(self) -> tuple[list[TournamentProgress], dict[int, str]]:
        """Every tournament's progress, and the stored reasons of the failed ones."""
        found: tuple[list[TournamentProgress], dict[int, str]] = await self._reads.get(
            "progress", lambda: asyncio.to_thread(self._read_all), PROGRESS_AGE)
        return found

    async def stored_reasons(self) -> dict[int, str]:
        """The reasons stored for the tournaments whose run failed."""
        return (await self.all_progress())[1]

    async def progress(self, tournament_id: int) -> TournamentProgress | None:
        """One tournament's progress (None: no such tournament)."""
        found = (await self.all_progress())[0]
        return next((p for p in found if p.id == tournament_id), None)

    async def report(self, tournament_id: int, done: int | None = None) -> ReportJson:
        """The tournament's report, read again only after a game finished (or stopped), or
        when `done` (the games stored, if known) differs from the last read's."""
        report: ReportJson = await self._reads.get(
            ("report", tournament_id),
            lambda: self._offload.call(report_json, tournament_id, games=done), tag=done)
        return report

    async def finished_games(self, tournament_id: int,
                             newest: int | None = None) -> list[GameFinishedEvent]:
        """The stored games of the tournament as ``game_finished`` data, oldest first: every
        one, or the `newest` few (shared by all callers until a game finishes)."""
        progress = await self.progress(tournament_id)
        done = None if progress is None else progress.done
        if newest != SNAPSHOT_GAMES:  # only the snapshot's (and the page's) size is shared
            found: list[GameFinishedEvent] = await self._offload.call(
                finished_games, tournament_id, newest, games=done)
            return found
        games: list[GameFinishedEvent] = await self._reads.get(
            ("finished", tournament_id, newest),
            lambda: self._offload.call(finished_games, tournament_id, newest, games=done),
            tag=done)
        return games

    async def report_html(self, tournament_id: int) -> str:
        """The tournament's HTML report, built off the event loop once per number of games
        stored and shared by every reader meanwhile."""
        progress = await self.progress(tournament_id)
        html: str = await self._reads.get(
            ("html", tournament_id),
            lambda: self._offload.call(report_html, tournament_id,
                                       games=None if progress is None else progress.done),
            tag=None if progress is None else (progress.done, progress.status))
        return html

    async def note_reason(self, tournament_id: int, reason: str | None) -> None:
        """Remember why the run failed (None: forget it), here and in the database (where it
        outlives a restart) when the database can still be written."""
        self.reasons[tournament_id] = reason
        try:
            await asyncio.to_thread(self.store.set_reason, tournament_id, reason)
        except Exception as exc:  # a store error is often the reason itself
            log.warning("tournament %d: the reason could not be stored: %s", tournament_id,
                        one_line(str(exc)))
        self.changed(tournament_id)

    def known_reason(self, tournament_id: int, stored: Mapping[int, str]) -> str | None:
        """Why the tournament's run failed: as this process knows it (None once forgotten),
        else as `stored` (the database's reasons) says."""
        return (self.reasons[tournament_id] if tournament_id in self.reasons
                else stored.get(tournament_id))

    async def forget_reason(self, tournament_id: int) -> None:
        """Forget why an earlier run failed, if a reason is known here or stored."""
        if self.reasons.get(tournament_id) is not None or tournament_id in \
                await self.stored_reasons():
            await self.note_reason(tournament_id, None)

    def unfinished(self) -> list[tuple[int, dict[str, Any]]]:
        """The service's own tournaments left unfinished, with their stored configurations
        (blocking)."""
        return self.store.unfinished_owned(SERVICE)

    def _read_all(self) -> tuple[list[TournamentProgress], dict[int, str]]:
        return self.store.tournaments(), self.store.failures()


def one_line(text: str, limit: int = 500) -> str:
    """A reason fit for one line of a page or a log: whitespace runs (line breaks included)
    made one space, control characters dropped, at most `limit` characters."""
    flat = " ".join("".join(c for c in text if c.isprintable() or c.isspace()).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
