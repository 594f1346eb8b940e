"""Which protocol each engine speaks, asked here for every front door before anything starts.

An engine configured with no ``proto=`` is started and greeted in both protocols
(`runner.tournament.protocols` says how); the answer is part of the configuration that is
stored and compared on a rerun, so the run verb, ``runner play`` and the service's submission
check all ask through `ask_protocols`.
"""

from __future__ import annotations

from collections.abc import Callable

from runner.config.model import Protocol, TournamentConfig
from runner.tournament.protocols import resolve_protocols

__all__ = ["ask_protocols"]


async def ask_protocols(config: TournamentConfig, say: Callable[[str], None], *,
                         known: dict[tuple[object, ...], Protocol | None] | None = None,
                         ) -> TournamentConfig:
    """`config` with every engine's protocol known, `say` told one line per engine asked;
    `known` keeps the answers between calls (a service asks each engine once)."""
    return await resolve_protocols(config, say, known=known)
