"""The records a tournament's report is made of: frozen, built by `runner.report.build`,
rendered by `runner.report.render` and put on the wire by `runner.report.tree`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from runner.config.model import TournamentFormat
from runner.game.record import GameTermination
from runner.report.workers import WorkerFaults, WorkerStanding
from runner.stats import MatchStats, Pentanomial, SprtResult, SprtSpec, Trinomial

__all__ = [
    "CrossCell",
    "Crosstable",
    "EloSeries",
    "EngineFaults",
    "EngineSearch",
    "LengthBin",
    "LlrPoint",
    "PairingResult",
    "Report",
    "ReportError",
    "SeriesPoint",
    "SprtState",
    "Standing",
    "TerminationTally",
    "TuningSeries",
]


class ReportError(ValueError):
    """The report cannot be made: no such tournament, or an empty database."""


@dataclass(frozen=True)
class Standing:
    """One engine's line in the standings; figures are None where they do not apply."""

    rank: int
    engine: str
    games: int
    points: float
    wins: int
    draws: int
    losses: int
    elo: float | None
    elo_error95: float | None
    los: float | None
    """Likelihood of superiority over the reference engine (None for the reference itself)."""
    reference: bool

    @property
    def score(self) -> float | None:
        """Points per game."""
        return self.points / self.games if self.games else None


@dataclass(frozen=True)
class PairingResult:
    """Two engines' results against each other, from `first`'s point of view."""

    first: str
    second: str
    trinomial: Trinomial
    pentanomial: Pentanomial
    stats: MatchStats | None
    """Headline figures: from complete pairs when there are any, else from single games."""
    wdl_stats: MatchStats | None
    """Figures from single games (W/D/L), with the draw ratio."""


@dataclass(frozen=True)
class CrossCell:
    """The row engine's points and games against the column engine."""

    points: float
    games: int


@dataclass(frozen=True)
class Crosstable:
    """Every engine against every other; ``cells[i][j]`` is engine i against engine j."""

    engines: tuple[str, ...]
    cells: tuple[tuple[CrossCell | None, ...], ...]


@dataclass(frozen=True)
class TerminationTally:
    """How many games ended one way, split by result."""

    termination: GameTermination | None
    """None for games stored without a termination this runner knows."""
    games: int
    white_wins: int
    black_wins: int
    draws: int
    unfinished: int

    @property
    def label(self) -> str:
        """The termination as the report writes it."""
        return "unknown" if self.termination is None else self.termination.value


@dataclass(frozen=True)
class EngineFaults:
    """Games one engine lost (or drew) through its own fault."""

    engine: str
    time_forfeits: int = 0
    illegal_moves: int = 0
    false_claims: int = 0
    crashes: int = 0
    """Disconnections: the engine exited or its pipe broke."""
    stalls: int = 0

    @property
    def total(self) -> int:
        """All faults together."""
        return (self.time_forfeits + self.illegal_moves + self.false_claims + self.crashes
                + self.stalls)


@dataclass(frozen=True)
class EngineSearch:
    """How one engine searched and spent its time, over its own moves (book moves left out)."""

    engine: str
    moves: int
    mean_depth: float | None
    """None when no move reported a depth."""
    mean_time_ms: float | None
    """The mean time a move took, in milliseconds (None without moves)."""
    nps: float | None
    """Nodes per second over the moves that reported a node count (None without any)."""
    mean_seldepth: float | None = None
    """None when no move reported a selective depth."""
    mean_time_share: float | None = None
    """The mean of each move's time over the clock when it was asked (None: no clock ran)."""
    least_left_ms: int | None = None
    """The least the clock showed right after a move's search, before the increment (None:
    no clock ran; negative: over its time within the time margin)."""
    near_flag: int = 0
    """Moves near the flag (under 5% of the clock when asked, or of the increment, left)."""
    worker: str | None = None
    """The worker these moves were played on (None: all workers, or the runner's processes)."""
    pondered: int = 0
    """Moves after which the engine had pondered on the opponent's reply (UCI ``go ponder``)."""
    ponder_hit_rate: float | None = None
    """The share of those on which the opponent played the expected move (None: no pondering)."""


@dataclass(frozen=True)
class SprtState:
    """An SPRT's settings and where it stands on the games played."""

    spec: SprtSpec
    maxgames: int | None
    result: SprtResult | None
    """None before the first game."""
    stored_decision: str | None
    """The decision the runner stored when it stopped the tournament, if it did."""
    first: str
    second: str


@dataclass(frozen=True)
class SeriesPoint:
    """An Elo estimate with its 95% margin after a number of games played."""

    games: int
    elo: float
    elo_error95: float


@dataclass(frozen=True)
class EloSeries:
    """How one Elo estimate moved as games were played."""

    label: str
    points: tuple[SeriesPoint, ...]


@dataclass(frozen=True)
class LlrPoint:
    """The SPRT's log-likelihood ratio after a number of games played."""

    games: int
    llr: float


@dataclass(frozen=True)
class LengthBin:
    """Games whose length in plies lies in [low, high]."""

    low: int
    high: int
    games: int


@dataclass(frozen=True)
class TuningSeries:
    """The SPSA run a tournament's pair belongs to: each parameter's theta over iterations."""

    run: str
    parameters: tuple[str, ...]
    start: tuple[float, ...]
    points: tuple[tuple[int, tuple[float, ...]], ...]
    """(iteration, theta of every parameter after it), in order."""


@dataclass(frozen=True)
class Report:
    """Everything a tournament report shows."""

    tournament_id: int
    name: str
    format: TournamentFormat
    status: str
    games_planned: int
    games_played: int
    first_started: datetime | None
    last_ended: datetime | None
    engines: tuple[str, ...]
    reference: str
    standings: tuple[Standing, ...]
    pairings: tuple[PairingResult, ...]
    crosstable: Crosstable | None
    draw_ratio: float | None
    terminations: tuple[TerminationTally, ...]
    faults: tuple[EngineFaults, ...]
    unattributed_faults: int
    sprt: SprtState | None
    elo_series: tuple[EloSeries, ...]
    elo_series_kind: str
    """What the Elo plot shows, in words."""
    llr_series: tuple[LlrPoint, ...]
    lengths: tuple[LengthBin, ...]
    mean_plies: float | None
    notes: tuple[str, ...]
    worker_faults: tuple[WorkerFaults, ...] = ()
    """Each engine's games and faults per worker (empty when every game ran in-process)."""
    workers: tuple[WorkerStanding, ...] = ()
    """Each worker's games, whole pairs, residual and flag by fishtest's rules (empty when
    every game ran in-process)."""
    search: tuple[EngineSearch, ...] = ()
    """Each engine's depth, time per move and speed (engines without a move left out)."""
    search_by_worker: tuple[EngineSearch, ...] = ()
    """The same per engine and worker, when the games ran on more than one worker."""
    stopped: str | None = None
    """Why the run stopped when an engine never moved (the stored reason): its games are no
    result, so the report has no standings, Elo or SPRT, only what happened in the games."""
    tuning: TuningSeries | None = None
    """The tuning run whose iteration this tournament's pair is (`runner tune`), if any."""
