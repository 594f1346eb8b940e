"""The one small interface the game loop sees: an `Engine`, its replies and its faults.

Moves cross this boundary as coordinate strings (``e2e4``, ``e7e8q``, ``e1g1``); the
game loop validates them with the rules core.  Protocol details (feature flags, force
mode, ``usermove``...) stay inside the implementations.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import abc
import enum
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple, Optional, cast

from mypy_extensions import mypyc_attr

from runner.clock import TimeControl
from runner.types import Castling960Style, OptionValue, Protocol, Variant

__all__ = [
    "CecpDialogue",
    "ClockState",
    "Engine",
    "EngineConfig",
    "EngineError",
    "EngineOption",
    "EngineProtocolError",
    "EngineReply",
    "EngineStalled",
    "EngineTerminated",
    "UnsafeCommandError",
    "entries_since",
    "GameSetup",
    "ResultClaim",
    "SearchInfo",
    "Side",
    "TranscriptEntry",
]


@mypyc_attr(native_class=False)
class EngineError(RuntimeError):
    """Base of every engine fault; each fault is raised once, then the engine is unusable."""


@mypyc_attr(native_class=False)
class EngineTerminated(EngineError):
    """The engine process exited (or closed its output) while we needed it."""

    def __init__(self, exit_code: int | None, detail: str = "") -> None:
        self.exit_code = exit_code
        message = f"engine terminated (exit code {exit_code})"
        super().__init__(f"{message}: {detail}" if detail else message)


@mypyc_attr(native_class=False)
class EngineStalled(EngineError):
    """The engine did not answer within the allowed time."""

    def __init__(self, detail: str, waited: float) -> None:
        self.waited = waited
        super().__init__(f"{detail} (waited {waited:.3f} s)")


@mypyc_attr(native_class=False)
class EngineProtocolError(EngineError):
    """The engine wrote something we cannot accept: an overlong line, a rejected legal move..."""


@mypyc_attr(native_class=False)
class UnsafeCommandError(ValueError):
    """A line for an engine holds a line break or another control character: nothing of the
    batch is written. Text from outside the runner (a name, an option) would otherwise reach
    the engine as commands of its own; every game would fail alike, so it is a set-up error
    (a ValueError), not a fault of the engine."""


class Side(enum.Enum):
    """The color an engine plays."""

    WHITE = "white"
    BLACK = "black"

    @property
    def other(self) -> Side:
        """The opposite color."""
        return Side.BLACK if self is Side.WHITE else Side.WHITE


class CecpDialogue(enum.Enum):
    """How a game is told to a CECP engine, where the protocol leaves a choice.

    ``full`` (the runner's own): the clock before the position, a day's ``st`` beside a
    depth limit, and the colour (``white``/``black``) before each ``go`` from force mode.
    ``lean``: the position first (with a dummy ``b2b3`` when Black is to move), no move time
    beside a depth limit and ``time 86400`` before each untimed search, no colour commands,
    ``computer`` before the opponent's ``name``, the moves of force mode before the clock,
    ``edit`` piece by piece file by file, and the init strings once, before ``xboard``.
    """

    FULL = "full"
    LEAN = "lean"


@mypyc_attr(native_class=False)
@dataclass(frozen=True)
class EngineConfig:
    """How to run one engine: command, environment, protocol, options and timeouts (seconds)."""

    # Quoted, unions as Optional: what pydantic reads when this module is compiled (mypyc
    # keeps only such annotations exact; see pyproject.toml's per-file-ignores).
    name: str
    argv: "tuple[str, ...]"
    working_dir: "Optional[Path]" = None
    env: "Optional[Mapping[str, str]]" = None
    protocol: Protocol = Protocol.CECP
    options: "Mapping[str, OptionValue]" = field(default_factory=dict)
    """The options to set, by name, their values typed: the client reads each as the
    engine declares it and spells it in its protocol's words (runner.protocol.options)."""
    init_strings: "tuple[str, ...]" = ()
    memory_mb: "Optional[int]" = None
    cores: "Optional[int]" = None
    nps: "Optional[int]" = None
    ponder: bool = False
    castling960: Castling960Style = Castling960Style.OO
    """CECP only: Chess960 castling written as ``oo`` (O-O/O-O-O) or ``kxr`` (king takes rook)."""
    cecp_dialogue: CecpDialogue = CecpDialogue.FULL
    """CECP only: where the protocol leaves a choice, what a game's dialogue says (see there)."""
    start_timeout: float = 10.0
    feature_timeout: float = 2.0
    silent_start_retries: int = 2
    silent_restart_after: float = 4.0
    feature_done_timeout: float = 120.0
    ping_timeout: float = 15.0
    no_ping_delay: float = 1.0
    quit_timeout: float = 5.0
    terminate_timeout: float = 2.0
    line_limit: int = 1 << 20
    stderr_limit: int = 64 << 10
    stderr_log: "Optional[Path]" = None
    transcript_size: int = 4000
    echo_lines: bool = False
    """Every line sent to the engine and read from it is echoed to standard output as it
    passes (runner.protocol.echo), a debugging aid."""
    options_submitted: bool = False
    """The options come from an untrusted submitter (the service): only declared spin, check
    and combo options may be set, within their declared bounds and choices."""

    def __post_init__(self) -> None:
        # Read through vars(): a caller may pass a list, made a tuple here, and compiled code
        # would refuse anything but the annotated tuple at a plain attribute read.
        argv: object = vars(self)["argv"]
        if not argv:
            raise ValueError(f"engine {self.name!r}: empty command")
        if isinstance(argv, str):
            raise ValueError(f"engine {self.name!r}: argv must be a sequence, not a string")
        object.__setattr__(self, "argv", tuple(str(word) for word in cast("Iterable[object]", argv)))
        if self.line_limit < 1024:
            raise ValueError(f"engine {self.name!r}: line limit {self.line_limit} is too small")
        # A caller may write the words ("uci", "kxr"): made the enums here, so that a config
        # holds one type whichever way it was built (ValueError for any other word).
        _enum_field(self, "protocol", Protocol, "'cecp' or 'uci'")
        _enum_field(self, "castling960", Castling960Style, "'oo' or 'kxr'")
        if self.silent_start_retries < 0:
            raise ValueError(f"engine {self.name!r}: silent_start_retries must be >= 0")
        for name in ("start_timeout", "feature_timeout", "silent_restart_after",
                     "feature_done_timeout", "ping_timeout",
                     "quit_timeout", "terminate_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"engine {self.name!r}: {name} must be positive")


def _enum_field(config: EngineConfig, name: str, kind: type[enum.Enum], words: str) -> None:
    """`config`'s field `name` made the member of `kind` its value names; ValueError naming
    the engine when it names none."""
    value: object = vars(config)[name]
    if isinstance(value, kind):
        return
    try:
        member = kind(value)
    except ValueError:
        raise ValueError(f"engine {config.name!r}: {name} must be {words}, not {value!r}") from None
    object.__setattr__(config, name, member)


@dataclass(frozen=True)
class EngineOption:
    """An option an engine declared: name, type, default, bounds (spins), choices (combos).

    Both protocols declare options of the same kinds (CECP's ``feature option=``, UCI's
    ``option name``); each client parses its own syntax into this one form.
    """

    name: str
    type: str
    default: str | None = None
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class GameSetup:
    """How a game starts for one engine: position, moves already played, variant, clock, side."""

    time_control: TimeControl
    side: Side
    start_fen: str | None = None
    moves: tuple[str, ...] = ()
    variant: Variant = Variant.STANDARD
    opponent: str | None = None

    @cached_property
    def first_to_move(self) -> Side:
        """The side to move in the start position (read from the FEN's second field, once:
        every move asked for checks it)."""
        if self.start_fen is None:
            return Side.WHITE
        fields = self.start_fen.split()
        if len(fields) < 2 or fields[1] not in ("w", "b"):
            raise ValueError(f"FEN without a side to move: {self.start_fen!r}")
        return Side.WHITE if fields[1] == "w" else Side.BLACK


@dataclass(frozen=True)
class ClockState:
    """What the clocks say when an engine is asked to move (seconds; None when untimed)."""

    own: float | None = None
    opponent: float | None = None
    moves_to_go: int | None = None
    period: int = 0
    opponent_increment: float | None = None
    """The opponent's increment per move now (UCI sends it); None: taken to be the engine's own."""


@dataclass(frozen=True)
class SearchInfo:
    """The last search report of an engine: depth, score (cp or mate), time, nodes, pv."""

    depth: int | None = None
    score_cp: int | None = None
    mate: int | None = None
    time: float | None = None
    nodes: int | None = None
    pv: tuple[str, ...] = ()
    seldepth: int | None = None
    nps: int | None = None
    hashfull: int | None = None
    tbhits: int | None = None


@dataclass(frozen=True)
class ResultClaim:
    """An engine's claim that the game ended (``1-0``, ``0-1``, ``1/2-1/2``), to be verified.

    `ply` is the number of plies the engine had seen (moves sent plus its own) when the
    claim was read, so the arbiter can check it in the right position.
    """

    result: str
    comment: str
    ply: int


@dataclass(frozen=True)
class EngineReply:
    """What `Engine.play` returns: a move (or none), search info, resignation, claim, draw offer."""

    move: str | None
    move_is_san: bool = False
    info: SearchInfo | None = None
    resigned: bool = False
    claim: ResultClaim | None = None
    draw_offered: bool = False
    sent_at: float = 0.0
    received_at: float = 0.0
    messages: tuple[str, ...] = ()
    words: str | None = None
    """The engine's own line when `move` only stands in for it (UCI's null answers such as
    ``bestmove (none)`` come back as ``0000``): what a report of the move quotes."""
    ponder_move: str | None = None
    """The reply the engine expects and will ponder on once its move is played (UCI's
    ``bestmove X ponder Y`` when pondering is on); the game loop then calls `Engine.ponder`."""
    ponder_hit: bool | None = None
    """Whether the engine had pondered on the move its opponent then played (None: it had
    not pondered before this move)."""

    @property
    def elapsed(self) -> float:
        """Seconds from the last byte of our request written to the reply line read."""
        return max(0.0, self.received_at - self.sent_at)


class TranscriptEntry(NamedTuple):
    """One protocol line: monotonic time, direction (``>`` sent, ``<`` received, ``!`` note).

    A named tuple, not a dataclass: one is made for every line an engine prints, and a
    frozen dataclass costs several times as much to build.
    """

    time: float
    direction: str
    text: str

    def __str__(self) -> str:
        return f"{self.time:14.6f} {self.direction} {self.text}"


_entry_time = attrgetter("time")


def entries_since(entries: Sequence[TranscriptEntry], began: float) -> tuple[TranscriptEntry, ...]:
    """The `entries` (in time order) stamped at `began` or later: found by bisection, then
    read from the end. An engine's transcript is a deque of up to thousands of entries of
    which a game holds the last few hundred; copying the whole deque to slice it cost more
    than a millisecond a game."""
    count = len(entries) - bisect_left(entries, began, key=_entry_time)
    if count <= 0:
        return ()
    tail = list(islice(reversed(entries), count))
    tail.reverse()
    return tuple(tail)


class Engine(abc.ABC):
    """An engine process speaking some protocol; the game loop's only view of it."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The engine's display name (configured, else what the engine calls itself)."""

    @property
    @abc.abstractmethod
    def transcript(self) -> Sequence[TranscriptEntry]:
        """The bounded record of protocol lines exchanged, for debugging."""

    @property
    @abc.abstractmethod
    def pid(self) -> int | None:
        """The engine's process id while it runs (None before it starts)."""

    def transcript_since(self, began: float) -> tuple[TranscriptEntry, ...]:
        """The transcript's entries from monotonic time `began` on (a game's, from its start)."""
        return entries_since(tuple(self.transcript), began)

    def stderr_mark(self) -> int:
        """A mark in the engine's standard error, for `stderr_since` (0: none is kept)."""
        return 0

    async def stderr_since(self, mark: int) -> str:
        """What the engine wrote to its standard error since `mark` (bounded; "" if none)."""
        return ""

    @property
    @abc.abstractmethod
    def features(self) -> Mapping[str, str]:
        """The features the engine announced (CECP ``feature`` lines; none over UCI)."""

    @property
    @abc.abstractmethod
    def options(self) -> Mapping[str, EngineOption]:
        """The options the engine declared, by name."""

    @abc.abstractmethod
    async def start(self) -> None:
        """Start the process and complete the protocol handshake."""

    def position_refusal(self, fen: str, variant: Variant) -> str | None:
        """Why this started engine cannot be given `fen` as a game's start position, or None
        when it can (a protocol that cannot state every position overrides this)."""
        return None

    async def change_options(self, config: EngineConfig) -> bool:
        """Between games, take `config` (this engine's own but for its options' values) by
        sending the changed values to the running process; False when the new values need a
        fresh start instead (this default: a protocol that cannot change them live)."""
        return False

    @abc.abstractmethod
    async def new_game(self, setup: GameSetup) -> None:
        """Prepare a new game and wait until the engine is synchronised."""

    @abc.abstractmethod
    async def play(
        self,
        moves: Sequence[str],
        clocks: ClockState,
        *,
        timeout: float | None = None,
        opponent_offers_draw: bool = False,
    ) -> EngineReply:
        """Ask for a move after `moves` (all moves since the setup position).

        Raises EngineStalled when `timeout` seconds pass without a reply.
        """

    def request_move(
        self,
        moves: Sequence[str],
        clocks: ClockState,
        *,
        timeout: float,
        opponent_offers_draw: bool,
        on_reply: Callable[[EngineReply], None],
        on_fault: Callable[[BaseException], None],
    ) -> bool:
        """Ask for a move as `play` does, without awaiting it: the reply goes to `on_reply`
        from the read callback that reads it (the fault, a stall after `timeout` seconds
        among them, to `on_fault`), so the caller can answer at once. False when this engine
        cannot be asked so now (this default; or a step of its dialogue needs awaiting):
        nothing was sent, and the caller awaits `play` instead."""
        return False

    def start_ponder(self, moves: Sequence[str], clocks: ClockState) -> bool:
        """`ponder` without awaiting it: what it sends is written at once (nothing, when
        there is nothing to ponder on). False when this engine cannot be told so (this
        default): nothing was sent, and the caller awaits `ponder` instead."""
        return False

    async def ponder(self, moves: Sequence[str], clocks: ClockState) -> None:
        """Think on the opponent's time after `moves` (the engine's own move last), on the
        reply its last `EngineReply.ponder_move` expected; `clocks` as they stand now, the
        engine's own first.  Only called after a reply that named a ponder move; a protocol
        that ponders by itself (CECP's ``hard``) never names one."""
        return None

    @abc.abstractmethod
    async def ping(self) -> float | None:
        """Round-trip a synchronisation request; the latency in seconds, None if unsupported."""

    @abc.abstractmethod
    async def end_game(self, result: str, comment: str = "",
                       moves: Sequence[str] = ()) -> None:
        """Tell the engine the game is over (``1-0``, ``0-1``, ``1/2-1/2`` or ``*``);
        `moves`, the game's moves since the setup, lets a client first tell the engine the
        last ones it has not seen (a CECP engine in the lean dialogue)."""

    @abc.abstractmethod
    async def quit(self) -> int | None:
        """Ask the engine to exit, escalating to signals; the exit code."""

    @abc.abstractmethod
    async def kill(self) -> int | None:
        """Kill the engine and its process group at once; the exit code."""
