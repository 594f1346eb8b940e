"""`PipeEngine`: what every engine client over pipes shares, whatever protocol it speaks.

The lifecycle of the process (spawn, listen, quit, kill), the name and transcript, and
the waits: a move request answered by one reply future, a synchronisation request
answered by a numbered future, the liveness check every call makes first.  A protocol
subclass says how lines are read (`_handle`), which futures wait on the output
(`_waiters`), what the engine calls itself and whether it may be sent SIGTERM.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from runner.protocol.engine import (
    ClockState,
    Engine,
    EngineConfig,
    EngineError,
    EngineReply,
    GameSetup,
    SearchInfo,
    Side,
    TranscriptEntry,
    entries_since,
)
from runner.protocol.process import EngineProcess
from runner.protocol.transport import EngineTransport, Line
from runner.protocol.waiting import OutputState, ReplyCall, Waiter, Watchdog, wait_answer
from runner.text import shown
from runner.types import OptionValue

__all__ = ["PipeEngine", "PipeProcess"]

_T = TypeVar("_T")
_OWN_NAME_LIMIT = 100
"""The most characters of the name an engine gives itself that are kept."""


class PipeProcess(Engine):
    """An `Engine` whose process is spoken to over pipes: its lifecycle, its name and
    transcript, and the state the requests share."""

    def __init__(self, config: EngineConfig, transport: EngineTransport | None) -> None:
        """`transport` replaces the subprocess for the first start (a scripted double in tests)."""
        self.config = config
        self.startup_seconds: float | None = None
        """Seconds the last start took, spawn to handshake done."""
        self._transport_given = transport
        self._proc: EngineTransport | None = None
        self._output = OutputState()
        self._setup: GameSetup | None = None
        self._reply: asyncio.Future[EngineReply] | ReplyCall | None = None
        self._reply_sent_at = 0.0
        self._watchdog = Watchdog()  # the deadline of each move asked for
        self._loop: asyncio.AbstractEventLoop | None = None
        """The loop the process was started on (its pipes are that loop's): asked of asyncio
        once per start, not per move, since each asking costs a getpid system call."""
        self._info: SearchInfo | None = None
        self._messages: list[str] = []

    # ----------------------------------------------------------------- what subclasses say

    def _option_commands(self, cfg: EngineConfig | None = None) -> list[str]:
        """The lines that set `cfg`'s options (default: the engine's own configuration);
        ValueError, naming the engine and the option, for one it cannot be given."""
        raise NotImplementedError

    @abc.abstractmethod
    def _self_name(self) -> str | None:
        """The name the engine gave itself, if it did."""

    @abc.abstractmethod
    def _handle(self, line: Line) -> object:
        """Act on one line the engine printed."""

    def _search_lines(self, moves: Sequence[str], clocks: ClockState,
                      opponent_offers_draw: bool) -> list[str] | None:
        """A move request's lines, the search begun (`_begin_search(self._call)`), for
        `request_move`; None when this request needs awaiting (nothing is begun)."""
        return None

    def _answered(self, reply: EngineReply) -> EngineReply:
        """What the protocol notes of a move request's reply before it is handed on."""
        return reply

    def _stalled_words(self) -> str:
        """What a move request's stall says."""
        return f"{self.name}: no move"

    def _forget_info(self) -> None:
        """A new search (or game): no report yet."""
        self._info = None

    @abc.abstractmethod
    def _waiters(self) -> Iterable[Waiter | None]:
        """The futures waiting on the engine's output now (failed when it ends)."""

    def _accepts_sigterm(self) -> bool:
        """Whether `quit` may send SIGTERM before SIGKILL."""
        return True

    # ----------------------------------------------------------------- Engine API

    @property
    def name(self) -> str:
        """The configured name, else the engine's own, else its command.

        The engine's own name is foreign text bound for PGN tags, terminals and the
        opponent's ``name`` command: its control characters are escaped and its length cut.
        """
        own = self._self_name()
        if own:
            own = shown(own.strip())[:_OWN_NAME_LIMIT]
        return self.config.name or own or self.config.argv[0]

    @property
    def transcript(self) -> Sequence[TranscriptEntry]:
        """Sent and received lines with monotonic times (bounded)."""
        return tuple(self._proc.transcript) if self._proc is not None else ()

    def transcript_since(self, began: float) -> tuple[TranscriptEntry, ...]:
        """The transcript's entries from monotonic time `began` on, read from the deque
        itself (not a copy of all of it)."""
        return entries_since(self._proc.transcript, began) if self._proc is not None else ()

    @property
    def pid(self) -> int | None:
        """The engine's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    def stderr_mark(self) -> int:
        """Bytes of standard error read so far (see `EngineProcess.stderr_since`)."""
        return self._proc.stderr_read if self._proc is not None else 0

    async def stderr_since(self, mark: int) -> str:
        """The standard error the process wrote since `mark`, as its bounded tail holds it."""
        return "" if self._proc is None else await self._proc.stderr_since(mark)

    async def quit(self) -> int | None:
        """``quit``, then SIGTERM (if the engine allows it) and SIGKILL to the group."""
        if self._proc is None:
            return None
        self._output.stop(self.name)
        self._watchdog.cancel()
        return await self._proc.stop(
            "quit",
            quit_timeout=self.config.quit_timeout,
            terminate_timeout=self.config.terminate_timeout,
            use_sigterm=self._accepts_sigterm(),
        )

    async def kill(self) -> int | None:
        """SIGKILL the engine's process group and reap it."""
        if self._proc is None:
            return None
        self._output.stop(self.name)
        self._watchdog.cancel()
        return await self._proc.kill()

    # ----------------------------------------------------------------- the process

    async def _spawn(self, start_cpu: int | None = None) -> EngineTransport:
        """Start a process (or the transport given once) and take its output from now on;
        with `start_cpu`, the process starts on that CPU alone (see EngineProcess)."""
        cfg = self.config
        proc = self._transport_given or EngineProcess(
            cfg.argv, cwd=cfg.working_dir, env=cfg.env, line_limit=cfg.line_limit,
            stderr_limit=cfg.stderr_limit, stderr_log=cfg.stderr_log,
            transcript_size=cfg.transcript_size, start_cpu=start_cpu,
            name=cfg.name or f"engine {cfg.argv[0]}", transcript=self._echoing_transcript(),
        )
        self._transport_given = None  # a restart spawns a real process
        self._proc = proc
        self._loop = asyncio.get_running_loop()
        await proc.start()
        # On raw pipes an overdue deadline reads what waits in stdout before it fails the
        # move (a reply there wins); elsewhere it waits a loop turn (waiting.Watchdog).
        look = getattr(proc, "read_waiting", None) if getattr(proc, "raw_pipes", False) else None
        self._watchdog.look_with(look)
        return proc

    def _echoing_transcript(self) -> deque[TranscriptEntry] | None:
        """With ``echo_lines``, a transcript that echoes each line to standard output."""
        if not self.config.echo_lines:
            return None
        from runner.protocol.echo import EchoingTranscript

        return EchoingTranscript(self.config.transcript_size, sys.stdout, lambda: self.name)

    def _listen(self, proc: EngineTransport) -> None:
        """Take the output of `proc` (after anything noted about earlier attempts)."""
        self._output.begin()
        proc.listen(self._on_lines, self._on_end)

    @property
    def _running(self) -> bool:
        """Whether a process was started and has not exited."""
        return self._proc is not None and self._proc.running

    def _on_lines(self, lines: list[Line]) -> None:
        """Act on each line of a chunk of output, as it arrives (see EngineTransport.listen)."""
        for line in lines:
            self._handle(line)

    def _on_end(self, exc: EngineError) -> None:
        """The output ended or broke a limit: whoever waits for an answer gets `exc`."""
        self._output.end(exc, self._waiters())

    def _check_alive(self) -> None:
        output = self._output
        if not output.listening or output.ended is not None:  # the name only for the error
            output.check(self.name)

    async def _send(self, *lines: str) -> float:
        assert self._proc is not None
        return await self._proc.write_lines(lines)

    def _proc_note(self, text: str) -> None:
        if self._proc is not None:
            self._proc.note(text)


class PipeEngine(PipeProcess):
    """An `Engine` whose process is spoken to over pipes: the move requests (awaited, or
    answered through callbacks) and the synchronisation waits."""

    def __init__(self, config: EngineConfig, transport: EngineTransport | None) -> None:
        """`transport` replaces the subprocess for the first start (a scripted double in tests)."""
        super().__init__(config, transport)
        self._call = ReplyCall(self._call_answered, self._call_failed)
        """The reply's stand-in for moves asked through callbacks (`request_move`)."""
        self._on_reply: Callable[[EngineReply], None] | None = None
        self._on_fault: Callable[[BaseException], None] | None = None

    # ----------------------------------------------------------------- requests and waits

    def _check_turn(self, setup: GameSetup, moves: Sequence[str]) -> bool:
        """Raise unless the engine's side is to move after `moves`; whether White is."""
        # Compared by identity: an enum's `value` and `other` are Python-level properties.
        white_first = setup.first_to_move is Side.WHITE
        white_to_move = white_first if len(moves) % 2 == 0 else not white_first
        if white_to_move != (setup.side is Side.WHITE):
            to_move = Side.WHITE if white_to_move else Side.BLACK
            raise ValueError(
                f"it is {to_move.value}'s turn, but {self.name} plays {setup.side.value}")
        return white_to_move

    def _begin_search(self, call: ReplyCall | None = None) -> None:
        """A move is asked for: a new reply future (or `call`, opened), and this search's
        info and messages."""
        if call is not None:
            call.open()
            self._reply = call
        else:
            loop = self._loop
            if loop is None:  # not started by _spawn (play() before new_game fails on its own)
                loop = asyncio.get_running_loop()
            self._reply = loop.create_future()
        self._forget_info()
        self._messages = []

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
        """`Engine.request_move` on raw pipes: the request is written at once (``os.write``;
        what the pipe does not take now is written by the loop) and the move's deadline is
        the watchdog's timer. Over asyncio's transports (the fallback) or scripted ones,
        False: the request is awaited."""
        proc = self._proc
        loop = self._loop
        if proc is None or loop is None or getattr(proc, "raw_pipes", False) is not True:
            return False
        lines = self._search_lines(moves, clocks, opponent_offers_draw)
        if lines is None:
            return False
        self._on_reply, self._on_fault = on_reply, on_fault
        try:
            self._reply_sent_at = proc.write_nowait(lines)
        except BaseException:
            self._reply = None
            raise
        self._watchdog.arm(loop, self._call, timeout, self._stalled_words)
        return True

    def _call_answered(self, reply: EngineReply) -> None:
        """The reply to a move asked through callbacks, from the read callback."""
        self._reply = None
        self._watchdog.disarm()
        on_reply = self._on_reply
        assert on_reply is not None
        on_reply(self._answered(reply))

    def _call_failed(self, exc: BaseException) -> None:
        """The fault of a move asked through callbacks (its stall, the end of output)."""
        self._reply = None
        self._watchdog.disarm()
        on_fault = self._on_fault
        assert on_fault is not None
        on_fault(exc)

    async def _await_reply(self, lines: Sequence[str], timeout: float | None,
                           what: str) -> EngineReply:
        """Send `lines` and await the reply `_begin_search` prepared; EngineStalled(`what`)."""
        assert isinstance(self._reply, asyncio.Future)
        try:
            sent_at = await self._send(*lines)
            self._reply_sent_at = sent_at
            if timeout is None:
                reply = await self._reply
            else:
                reply = await self._watchdog.wait(self._reply, timeout,
                                                  lambda: f"{self.name}: {what}")
        finally:
            self._reply = None
        if reply.sent_at != sent_at:  # the answer was read before the write had drained
            reply = dataclasses.replace(reply, sent_at=sent_at)
        return reply

    async def _round_trip(self, waiters: dict[int, asyncio.Future[float]], number: int,
                          command: str, timeout: float, what: str) -> float:
        """Send `command` and await the answer numbered `number`; the latency in seconds."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        waiters[number] = future
        try:
            sent = await self._send(command)
            answered = await self._wait(future, timeout, what)
        finally:
            waiters.pop(number, None)
        return max(0.0, answered - sent)

    def _patient(self, timeout: float) -> float:
        """Engines that showed a long start-up get a proportionally longer wait."""
        return max(timeout, 2.0 * (self.startup_seconds or 0.0))

    def _started(self, began: float) -> None:
        """Start-up is complete: remember how long it took."""
        self.startup_seconds = time.monotonic() - began

    async def _wait(self, future: asyncio.Future[_T], timeout: float | None, what: str) -> _T:
        """Await one of our own futures; EngineStalled after `timeout`."""
        return await wait_answer(future, timeout, f"{self.name}: {what}")

    def _require_game(self) -> GameSetup:
        if self._setup is None:
            raise RuntimeError("play() called outside a game: call new_game() first")
        return self._setup

    async def change_options(self, config: EngineConfig) -> bool:
        """`Engine.change_options` over the protocol's own option lines (CECP's ``option``,
        UCI's ``setoption``), sent only for the values that changed; the next game's
        synchronisation waits for the engine to have read them. False (nothing sent) when
        the process is not running or `config` differs in more than its options' values."""
        old = self.config
        if (not self._running or set(config.options) != set(old.options)
                or _all_but_options(config) != _all_but_options(old)):
            return False
        changed = {k: v for k, v in config.options.items() if not _same(old.options[k], v)}
        if changed:
            lines = self._option_commands(dataclasses.replace(
                config, options=changed, memory_mb=None, cores=None))
            await self._send(*lines)
        self.config = config
        return True


def _same(old: OptionValue, new: OptionValue) -> bool:
    """Whether two option values are one: of one type as well as equal (``True == 1``, yet
    a check set to True and a spin set to 1 are different settings)."""
    return type(old) is type(new) and old == new


def _all_but_options(config: EngineConfig) -> tuple[object, ...]:
    """`config`'s fields but its options, to compare as a tuple: compiled by mypyc, ``!=``
    between two EngineConfig objects compares their identity (the dataclass's generated
    ``__eq__`` is not seen), so a config rebuilt with the same values would differ."""
    return tuple(getattr(config, field.name) for field in dataclasses.fields(config)
                 if field.name != "options")
