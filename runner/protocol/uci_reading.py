"""`UciReading`: what a UCI engine's lines do to the client's state, as they arrive.

The base of `UciEngine` (uci.py): the state of the dialogue (``id``, ``option``
declarations, ``uciok``, ``readyok`` counts, the search info, the awaited ``bestmove``, a
ponder search) and the handling of each line the engine prints, called from the pipe's read
callback. The wire parsers are pure functions in `uci_parse`; nothing here writes.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

from runner.protocol.engine import (
    EngineConfig,
    EngineOption,
    EngineReply,
    SearchInfo,
)
from runner.protocol.pipe import PipeEngine
from runner.protocol.transport import EngineTransport, Line
from runner.protocol.uci_parse import (
    merge_info,
    merge_info_lines,
    parse_bestmove,
    parse_info,
    parse_option,
)
from runner.protocol.waiting import Waiter

__all__ = ["UciReading"]

_MESSAGES_KEPT = 20
"""Messages (``info string``, the ponder move) kept with one search's reply."""
_LINES_KEPT = 256
"""``info`` lines kept unparsed at most: a long search's flood is merged in batches."""


class UciReading(PipeEngine):
    """A UCI client's state and its engine's lines (see the module)."""

    def __init__(self, config: EngineConfig, *, transport: EngineTransport | None = None) -> None:
        """`transport` replaces the subprocess (a scripted double in tests, say)."""
        super().__init__(config, transport)
        self.id_name: str | None = None
        self.id_author: str | None = None
        self._options: dict[str, EngineOption] = {}
        self.option_values: dict[str, str | None] = {}
        """What was sent with ``setoption`` (declared spelling -> wire value)."""
        self._uciok: asyncio.Future[float] | None = None
        self._ready_sent = 0
        self._ready_seen = 0
        self._ready_waiters: dict[int, asyncio.Future[float]] = {}
        self._searches = 0  # ``go`` sent minus ``bestmove`` read: one bestmove per go
        self._score_is_bound = False
        self._info_lines: list[str] = []
        """The search's ``info`` lines not merged into `_info` yet (`_settled_info`)."""
        self._chess960: bool | None = None
        self._position_moves: list[str] = []  # the moves of the last ``position`` line...
        self._position_text = ""  # ... and the line itself (`UciSearch._position`)
        self._position_fen: str | None = None
        self._ponder_move: str | None = None  # the reply the last bestmove expects
        self._may_ponder = False  # ponder=true and the engine declares Ponder (as cutechess)
        self._pondered: list[str] | None = None
        """The moves of the position a running ``go ponder`` searches (the expected reply last)."""
        self._ponder_search: Waiter | None = None
        self._ponder_heard: asyncio.Future[None] | None = None  # its first info line came

    # ----------------------------------------------------------------- Engine API

    @property
    def features(self) -> Mapping[str, str]:
        """UCI has no features: always empty."""
        return {}

    @property
    def options(self) -> dict[str, EngineOption]:
        """The options the engine declared before ``uciok``."""
        return self._options

    # ----------------------------------------------------------------- reading

    def _waiters(self) -> Iterable[Waiter | None]:
        """The bestmove, the uciok and the readyoks awaited."""
        return (self._reply, self._ponder_search, self._uciok, *self._ready_waiters.values())

    def _self_name(self) -> str | None:
        """The name in ``id name ...``."""
        return self.id_name

    def _handle(self, line: Line) -> None:
        text = line.text.strip()
        head, _, rest = text.partition(" ")
        if head == "info":
            self._handle_info(rest)
        elif head == "bestmove":
            self._handle_bestmove(line, text)
        elif head == "readyok":
            self._ready_seen += 1
            waiter = self._ready_waiters.get(self._ready_seen)
            if waiter is not None and not waiter.done():
                waiter.set_result(line.time)
        elif head == "option":
            if self._uciok is not None and not self._uciok.done():
                try:
                    option = parse_option(text)
                except ValueError as exc:
                    self._proc_note(f"option declaration ignored: {exc}")
                else:
                    self._options[option.name] = option
        elif head == "id":
            key, _, value = rest.strip().partition(" ")
            if key == "name":
                self.id_name = value.strip()
            elif key == "author":
                self.id_author = value.strip()
        elif head == "uciok":
            if self._uciok is not None and not self._uciok.done():
                self._uciok.set_result(line.time)
        elif head in ("copyprotection", "registration") and "error" in rest:
            self._proc_note(f"the engine reports {text!r}; playing on")

    def _handle_info(self, rest: str) -> None:
        if self._reply is None:
            heard = self._ponder_heard
            if heard is None:
                return
            if not heard.done():
                heard.set_result(None)
                self._heard()
        if rest.startswith("string "):  # Stockfish's NNUE note, every search: no fields to parse
            if len(self._messages) < _MESSAGES_KEPT:
                self._messages.append(f"info string {rest[7:].strip()}")
            return
        if "string" not in rest:
            # Kept, not parsed: only the newest values reach the move's record, read once
            # the bestmove comes (`_settled_info`); most of a search's lines are never parsed.
            lines = self._info_lines
            lines.append(rest)
            if len(lines) >= _LINES_KEPT:
                self._settled_info()
            return
        info = parse_info(rest)
        if info.string is not None:
            if len(self._messages) < _MESSAGES_KEPT:
                self._messages.append(f"info string {info.string}")
            return
        if info.multipv not in (None, 1):
            return
        self._info, self._score_is_bound = merge_info(self._settled_info(), info,
                                                      self._score_is_bound)

    def _heard(self) -> None:
        """The ponder search's first report came (a callback-driven hit waits for it)."""

    def _settled_info(self) -> SearchInfo | None:
        """The search's report with every kept ``info`` line merged in (in their order)."""
        lines = self._info_lines
        if lines:
            self._info, self._score_is_bound = merge_info_lines(self._info, lines,
                                                                self._score_is_bound)
            lines.clear()
        return self._info

    def _forget_info(self) -> None:
        """A new search (or game): no report yet."""
        self._info = None
        self._info_lines.clear()

    def _handle_bestmove(self, line: Line, text: str) -> None:
        if self._searches <= 0:
            self._proc_note("bestmove without a search ignored")
            return
        self._searches -= 1
        reply = self._reply or self._ponder_search
        if self._searches > 0 or reply is None or reply.done():
            self._proc_note("bestmove of an abandoned search ignored")
            return
        move, ponder = parse_bestmove(text)
        if ponder is not None:
            self._messages.append(f"ponder {ponder}")
        self._ponder_move = ponder if self._may_ponder and reply is self._reply else None
        reply.set_result(EngineReply(
            move=move, info=self._settled_info(), sent_at=self._reply_sent_at, received_at=line.time,
            messages=tuple(self._messages), words=text.strip() if move == "0000" else None,
            ponder_move=self._ponder_move,
        ))

