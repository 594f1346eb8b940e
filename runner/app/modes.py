"""The words a start is given: how it finds its tournament, and which database it uses.

Kept apart from `runner.app.lifecycle` (which imports the tournament and the schedulers) so
that the command line can name them without loading what only a run needs.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.config.model import TournamentConfig

__all__ = ["StartMode", "tournament_db"]


class StartMode(enum.Enum):
    """Which stored tournament a start continues (the rules: `runner.app.lifecycle`)."""

    CONTINUE = "continue"
    FORCE = "force"
    NEW = "new"
    SAME = "same"


def tournament_db(given: str | None, config: TournamentConfig | None) -> tuple[str | None, str]:
    """Which database a run uses, and where that choice came from (for messages): the one
    given (``--db``), else the configuration's ``database =``, else None (``$RUNNER_DB``,
    else ./runner.db, resolved by the store)."""
    if given:
        return given, "--db"
    if config is not None and config.database:
        return config.database, "the configuration's database ="
    return None, "--db"
