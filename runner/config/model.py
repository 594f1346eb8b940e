"""The tournament configuration model: frozen dataclasses and enums, and their JSON form.

`TournamentConfig` is the one description of a tournament: `parse` builds it from a TOML
file or a table made by the command line, the tournament plays it, and the store keeps it as
JSON (`TournamentConfig.to_json`) so that a resume gets back the very same value
(`TournamentConfig.from_json`). The JSON conversion is pydantic's, imported only when a
configuration is converted: the command line starts without it.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.clock import TimeControl
from runner.config.fingerprint import game_defining
from runner.config.jsonform import field_hints, known_keys, plain, validated
from runner.config.recipes import BuildOrder
from runner.config.stored import LEGACY_MODEL_WORDS, is_legacy_json, upgrade_stored
from runner.config.timecontrol import WrittenTimeControl
from runner.protocol.engine import CecpDialogue
from runner.stats import EloModel, SprtSpec
from runner.types import Castling960Style, OptionValue, Protocol, Variant

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = [
    "BOOK_SUFFIXES",
    "ENUM_ALIASES",
    "AdjudicationConfig",
    "BookFormat",
    "Castling960Style",
    "ClusterConfig",
    "DrawAdjudication",
    "EngineSpec",
    "OpeningOrder",
    "OpeningsConfig",
    "OrderStyle",
    "OptionValue",
    "PlayOrder",
    "Protocol",
    "ResignAdjudication",
    "RestartPolicy",
    "SprtConfig",
    "TablebaseResults",
    "TournamentConfig",
    "TournamentFormat",
    "is_legacy_json",
    "stored_setting",
]


_FORBID_UNKNOWN_KEYS = {"extra": "forbid"}
"""pydantic's setting for each dataclass: JSON with a key the model lacks is refused rather than
read with that setting silently dropped (a newer runner's data read by an older one)."""


class TournamentFormat(Enum):
    """How engines are paired."""

    MATCH = "match"
    GAUNTLET = "gauntlet"
    ROUND_ROBIN = "round-robin"


class RestartPolicy(Enum):
    """Whether an engine process is started afresh for each game."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


class BookFormat(Enum):
    """The format of an openings file."""

    EPD = "epd"
    PGN = "pgn"
    POLYGLOT = "polyglot"


class TablebaseResults(Enum):
    """Which results the tablebases may adjudicate (fastchess's -tbadjudicate)."""

    BOTH = "both"
    WIN_LOSS = "win_loss"
    DRAW = "draw"


class OpeningOrder(Enum):
    """The order in which openings are taken from the book."""

    SEQUENTIAL = "sequential"
    RANDOM = "random"


ENUM_ALIASES: dict[type[Enum], dict[str, str]] = {
    # Other words users write for enum values (case is ignored as well).
    TournamentFormat: {"roundrobin": "round-robin", "round_robin": "round-robin"},
    Protocol: {"xboard": "cecp", "winboard": "cecp"},
    Variant: {"chess960": "fischerandom", "frc": "fischerandom", "960": "fischerandom"},
    BookFormat: {"fen": "epd", "bin": "polyglot"},
    TablebaseResults: {"win-loss": "win_loss", "winloss": "win_loss"},
    EloModel: LEGACY_MODEL_WORDS,
}
# The book format an openings file's extension implies.
BOOK_SUFFIXES = {".epd": BookFormat.EPD, ".fen": BookFormat.EPD, ".pgn": BookFormat.PGN,
                  ".bin": BookFormat.POLYGLOT}


# -- the model ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineSpec:
    """One engine: how to start it and how to talk to it."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    name: str
    command: tuple[str, ...]
    """The argv to execute, its program resolved to an absolute path."""
    written_command: tuple[str, ...]
    """The argv as the configuration wrote it (fingerprinted; shown to users)."""
    dir: Path | None = None
    protocol: Protocol = Protocol.CECP
    tc: WrittenTimeControl | None = None
    """This engine's own time control, overriding the tournament's (text is parsed here)."""
    init_strings: tuple[str, ...] = ()
    options: tuple[tuple[str, OptionValue], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    restart: RestartPolicy = RestartPolicy.AUTO
    castling960: Castling960Style = Castling960Style.OO
    """CECP: how Chess960 castling is written to the engine (``oo`` or ``kxr``)."""
    ponder: bool = False
    """Whether the engine may think on its opponent's time (CECP ``hard``, UCI ``go ponder``)."""
    protocol_detect: bool = False
    """No protocol was given: a run asks the engine which one it speaks before game 1
    (runner.tournament.protocols) and stores the answer in `protocol`, this mark cleared."""
    options_submitted: bool = False
    """The options come from an untrusted submitter (set by the service's submission check,
    stored with the tournament): the engine is sent only declared spin, check and combo
    options, checked when it starts (runner.protocol.options)."""
    stderr: Path | None = None
    """A file the engine's standard error is appended to (cutechess-cli's ``stderr=``)."""
    timeout_scale: float = 1.0
    """A factor on the runner's waits for the engine to start, answer a ping and quit
    (cutechess-cli's ``tscale=``); the clocks are not scaled."""
    white_pov: bool = False
    """The engine reports scores from White's side: its scores as Black are negated
    (cutechess-cli's ``whitepov``)."""
    thread_options: tuple[str, ...] | None = None
    """The options that set how many threads this engine uses, capped by ``runner serve``
    for a submitter (None: the usual names, runner.service.caps)."""
    memory_options: tuple[str, ...] | None = None
    """The options that size this engine's memory in MB, whose sum ``runner serve`` caps for
    a submitter (None: the usual names)."""
    cecp_dialogue: CecpDialogue = CecpDialogue.FULL
    """CECP: what a game says where the protocol leaves a choice (see CecpDialogue)."""
    echo_lines: bool = False
    """Every line exchanged with the engine echoed on standard output (a debugging aid)."""
    built_from: BuildOrder | None = None
    """The recipe and commit this engine was built from (a branch test's side): a Dask
    worker builds it itself from this rather than run the coordinator's build (set by the
    branch test, never read from a file)."""

    def __post_init__(self) -> None:
        _parse_tc(self)

    @property
    def options_dict(self) -> dict[str, OptionValue]:
        """The engine options as a fresh dictionary."""
        return dict(self.options)


@dataclass(frozen=True)
class OpeningsConfig:
    """Where openings come from and in which order."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    file: Path
    format: BookFormat = BookFormat.EPD
    order: OpeningOrder = OpeningOrder.SEQUENTIAL
    seed: int = 0
    plies: int | None = None
    start: int = 1
    """1-based index of the first opening used (as in cutechess-cli)."""

    @property
    def start_index(self) -> int:
        """The 0-based index of the first opening."""
        return self.start - 1


@dataclass(frozen=True)
class DrawAdjudication:
    """Adjudicate a draw after `movenumber` when |score| <= `score` cp for `movecount` moves."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    movenumber: int = 40
    movecount: int = 8
    score: int = 10


@dataclass(frozen=True)
class ResignAdjudication:
    """Adjudicate a loss when a score <= -`score` cp holds for `movecount` moves."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    movecount: int = 3
    score: int = 600
    twosided: bool = False
    """Whether the winning side must agree (its score >= `score`) too."""


@dataclass(frozen=True)
class AdjudicationConfig:
    """Game-ending rules beyond the laws of chess; None means the rule is off."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    draw: DrawAdjudication | None = None
    resign: ResignAdjudication | None = None
    maxmoves: int | None = None
    tb: str = "none"
    """Kept for files that say ``tb = "none"``; the tables are named in `tablebases`."""
    tablebases: tuple[Path, ...] = ()
    """Syzygy directories (cutechess-cli's -tb); empty: no tablebase adjudication."""
    tbpieces: int | None = None
    """Adjudicate positions of at most this many pieces (None: all the tables cover)."""
    tbignore50: bool = False
    """Cursed wins and blessed losses count as wins and losses, not draws."""
    tbadjudicate: TablebaseResults = TablebaseResults.BOTH
    """Which results the tables may end a game with."""


@dataclass(frozen=True)
class SprtConfig:
    """Sequential probability ratio test settings (bounds in `model` units)."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: EloModel = EloModel.NORMALIZED
    """The units of the bounds (a str enum: stored and written as its word)."""
    maxgames: int | None = None

    def __post_init__(self) -> None:
        # A caller may still write the model as its word ("logistic"): made the enum here,
        # so that a configuration holds one type whichever way it was built.
        if not isinstance(self.model, EloModel):
            word = str(self.model).lower()
            object.__setattr__(self, "model", EloModel(LEGACY_MODEL_WORDS.get(word, word)))

    def spec(self) -> SprtSpec:
        """The statistics module's test for these settings."""
        return SprtSpec(elo0=float(self.elo0), elo1=float(self.elo1), alpha=float(self.alpha),
                        beta=float(self.beta), model=self.model)


@dataclass(frozen=True)
class ClusterConfig:
    """Where the games run when not in the runner's process: local workers or a Dask scheduler."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    workers: int | None = None
    """Worker processes of a LocalCluster on this machine."""
    address: str | None = None
    """A running Dask scheduler (``tcp://HOST:8786``)."""


class OrderStyle(Enum):
    """A schedule and opening deal other than the runner's own game pairs, by what it does.

    The value is what the store keeps: a resumed run looks its implementation up by it
    (runner.tournament.styles), so a stored tournament names a way of playing, not a program.
    """

    INDEX = "index"
    """Encounters in the engines' index order, White by the game's number, one opening per
    encounter from a book shuffled with mt19937_64 (``runner-fastchess``)."""
    STEPPED = "stepped"
    """A pairer stepped game by game: a pair's colours flip from game to game, an opening is
    repeated by a counter that a change of players resets (``runner-cutechess``)."""


@dataclass(frozen=True)
class PlayOrder:
    """Who plays whom in which order and colours, and which opening each game starts from,
    when not the runner's own game pairs. `style` picks the implementation; the settings
    after it are read by the styles that name them."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    style: OrderStyle
    swap: bool = True
    """Colours alternate between the games of a pair of players (off: every game keeps the
    encounter's first engine on White)."""
    reverse: bool = False
    """Colours the other way round."""
    seeds: int = 0
    """Gauntlet: how many of the first engines play all the others."""
    tournament: str = "round-robin"
    """STEPPED: round-robin, gauntlet or pyramid (INDEX reads the tournament's `format`)."""
    games: int = 1
    """STEPPED: games per encounter (INDEX reads the tournament's `games`)."""
    rounds: int = 1
    """STEPPED: the round multiplier (INDEX reads the tournament's `rounds`)."""
    repeat: int = 1
    """STEPPED: games played from one opening before the next is dealt."""
    policy: str = "default"
    """STEPPED: when a new opening is dealt: default, encounter or round."""
    srand: int = 0
    """STEPPED: the seed of the Mersenne Twister that draws Chess960 start positions when
    there is no book."""


@dataclass(frozen=True)
class TournamentConfig:
    """A whole, validated tournament configuration."""

    __pydantic_config__ = _FORBID_UNKNOWN_KEYS

    name: str
    format: TournamentFormat
    engines: tuple[EngineSpec, ...]
    tc: WrittenTimeControl | None = None
    """The engines' time control, parsed when the configuration is read (text given is
    parsed here); an engine's own overrides it."""
    rounds: int = 1
    games: int = 2
    """Games per encounter per round: an even number, each opening played as a game pair."""
    openings: OpeningsConfig | None = None
    adjudication: AdjudicationConfig = field(default_factory=AdjudicationConfig)
    concurrency: int = 1
    variant: Variant = Variant.STANDARD
    sprt: SprtConfig | None = None
    pgnout: Path | None = None
    database: str | None = None
    recover: bool = False
    affinity: bool = False
    """Pin each game slot's engines to one CPU (Linux), slot n on the n-th allowed CPU."""
    cluster: ClusterConfig | None = None
    """Play on Dask workers (left out of the fingerprint: where games run does not matter)."""
    source: str = "<config>"
    order: PlayOrder | None = None
    """The schedule and opening deal of another style (None: the runner's own game pairs)."""
    wait_ms: int = 0
    """Pause of each game slot after every game, in milliseconds (fastchess's -wait)."""
    start_delay_ms: int = 0
    """Milliseconds waited before each game starts once some game has finished
    (cutechess-cli's -wait); not in the fingerprint."""
    sprt_trinomial: bool = False
    """The SPRT counts games (wins, draws, losses) rather than game pairs (fastchess without
    pentanomial reports: -games 1, -report penta=false, cutechess output, BayesElo)."""
    crash_stops: bool = False
    """A game ended by an engine's crash or stall stops the run, the games in flight aborted
    (fastchess without -recover); by default the engine is restarted and the run goes on."""
    move_ceiling: float | None = None
    """Seconds a move may take when no clock runs (a depth or node limit) before it is lost
    on time: ``runner serve`` sets it on submissions (None: the engine is waited for as long
    as any untimed move, then counts as stalled)."""

    def __post_init__(self) -> None:
        _parse_tc(self)

    def engine(self, name: str) -> EngineSpec:
        """The engine called `name`."""
        for entry in self.engines:
            if entry.name == name:
                return entry
        raise KeyError(name)

    def time_control(self, engine: EngineSpec | str) -> TimeControl:
        """The time control an engine plays with (its own, else the tournament's), parsed
        when the configuration was read."""
        entry = self.engine(engine) if isinstance(engine, str) else engine
        written = entry.tc if entry.tc is not None else self.tc
        if written is None:
            raise ValueError(f"engine {entry.name!r} has no time control")
        return written.control

    def game_defining(self) -> dict[str, Any]:
        """The settings that decide which games are played and how (JSON-ready): the
        fingerprint's projection of `to_json` (runner.config.fingerprint)."""
        return game_defining(self.to_json())

    def fingerprint(self) -> str:
        """A stable hash of `game_defining`: a resumed run compares it to detect a changed config.

        Concurrency, output paths, restart policies and where files live are left out, so a
        run can be resumed with more cores or from another directory.
        """
        text = json.dumps(self.game_defining(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """The whole configuration as JSON-ready data; `from_json` gives back an equal config.

        This is what the store keeps with a tournament, so `runner resume` restores every
        setting, not only those in the fingerprint. It is what pydantic's ``dump_python(...,
        mode="json")`` gives (a test compares them), written out here: every ``runner match``
        stores its configuration, and importing pydantic and building its schema for that one
        call cost each run about 60 ms of CPU. `from_json` reads it back with pydantic.
        """
        return plain(self, TournamentConfig)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, where: str = "stored configuration",
                  ) -> TournamentConfig:
        """The configuration `to_json` wrote (or an older runner stored); raises ConfigError.

        `where` names the data's origin in the problems reported.
        """
        return validated(_json_adapter(), upgrade_stored(data), where)

    @classmethod
    def from_stored(cls, data: Mapping[str, Any], *, where: str = "stored configuration",
                    ) -> TournamentConfig:
        """`from_json` for a row any runner stored, tolerating keys this version does not
        know (a setting since removed): they are dropped, not refused. Raises ConfigError
        when a setting this version needs is missing or unreadable."""
        return validated(_json_adapter(), known_keys(upgrade_stored(data), cls, ENUM_ALIASES), where)


def _parse_tc(owner: EngineSpec | TournamentConfig) -> None:
    """`owner`'s time control given as text (by a caller, not read from a file) parsed:
    each configuration holds one type whichever way it was built. ValueError when it is no
    time control."""
    if owner.tc is not None and not isinstance(owner.tc, WrittenTimeControl):
        object.__setattr__(owner, "tc", WrittenTimeControl(owner.tc))


def stored_setting(data: Mapping[str, Any], key: str, *,
                   where: str = "stored configuration") -> Any:
    """One top-level setting (``format``, ``sprt``, ...) of a stored configuration read
    through its type in `TournamentConfig`, keys it does not know dropped: for a row too old
    or too partial to read as a whole. An absent setting reads as None; raises ConfigError
    when the value does not fit the type."""
    hint = field_hints(TournamentConfig)[key]
    return validated(_setting_adapter(key), known_keys(data.get(key), hint, ENUM_ALIASES), where, key)


@functools.cache
def _setting_adapter(key: str) -> TypeAdapter[Any]:
    """pydantic's converter for one top-level setting's type (built once per key)."""
    from pydantic import TypeAdapter

    return TypeAdapter(field_hints(TournamentConfig)[key])


@functools.cache
def _json_adapter() -> TypeAdapter[TournamentConfig]:
    """pydantic's converter between `TournamentConfig` and JSON-ready data (built once)."""
    from pydantic import TypeAdapter

    return TypeAdapter(TournamentConfig)
