"""What cutechess-cli 1.5.1 prints and writes as a run goes, from the runner's events.

Lines on stdout, character for character as cutechess-cli's `EngineMatch` and `Tournament`
print them: `Started game N of M (A vs B)`, `Finished game N (A vs B): 1-0 {White mates}`,
`Score of A vs B: W - L - D  [0.500] N` after every game of a two-player run, the ratings
(per-colour lines, `Elo difference`, `SPRT:`; a ranking table for more players) every
`-ratinginterval` games and at the end, the outcome counts every `-outcomeinterval` games and
at the end, `Terminating process of engine X(N)` when an engine crashes or stalls, and
`Finished match`. Warnings go to stderr as `Warning: ...`. The PGN file gets each game as soon
as every game numbered before it is written (cutechess's order), flushed and synced; the EPD
file each game's final position.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TextIO

from runner.clock import TimeControl
from runner.dropin.cutechess.pgn import cutechess_pgn
from runner.dropin.cutechess.results import (
    FIELD_GROUPS,
    FIELD_HEADERS,
    NAMED_FORMATS,
    SILENT_FIELDS,
    CuteResult,
    Kind,
    cute_result,
    qt_fixed,
    qt_general,
)
from runner.dropin.cutechess.settings import CutechessSettings, SprtBounds
from runner.dropin.cutechess.stats import CutechessElo, sprt_status
from runner.dropin.keptfiles import OutputFileError, append_whole, repair_games, repair_lines
from runner.game.record import GameRecord, GameSpec
from runner.game.termination import GameTermination
from runner.rules import Result
from runner.tournament.events import (
    EngineNotStarted,
    GameFinished,
    GameStarted,
    Notice,
    RunOutcome,
)

__all__ = ["NAMED_FORMATS", "CutechessOutput"]

# Outcome classes of the table's counters (cutechess's result types and its extra ones).
_REGULAR_WIN, _REGULAR_LOSS, _OTHER_WIN, _WRONG_CLAIM = "RegulW", "RegulL", "OtherW", "WrClaim"
_FALSE_CLAIM_MARK = "makes a false claim: "
"""In the runner's reason for a false claim, what precedes the claim (``0-1 {Black mates}``)."""
_DRAW_CLASSES = (("stalemate", "DStale"), ("material", "DMater"), ("repetition", "DRepet"),
                 ("moves rule", "DMoves"), ("counting rules", "DCount"))
_KIND_CLASS = {Kind.TIMEOUT: "Time", Kind.ILLEGAL_MOVE: "Illegal",
               Kind.DISCONNECTION: "Discon", Kind.STALLED_CONNECTION: "Stall",
               Kind.ADJUDICATION: "DAdj", Kind.AGREEMENT: "DAgree"}


@dataclass
class _Player:
    """One player's tallies, as cutechess's `TournamentPlayer` keeps them."""

    name: str
    time_control: str = ""
    wins: int = 0
    losses: int = 0
    draws: int = 0
    white_wins: int = 0
    white_losses: int = 0
    white_draws: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def score(self) -> int:
        """Half points."""
        return self.wins * 2 + self.draws

    def add(self, white: bool, half_points: int) -> None:
        if half_points == 2:
            self.wins += 1
            self.white_wins += white
        elif half_points == 1:
            self.draws += 1
            self.white_draws += white
        else:
            self.losses += 1
            self.white_losses += white

    def add_outcome(self, cls: str, text: str) -> None:
        self.outcomes[text] = self.outcomes.get(text, 0) + 1
        self.classes[cls] = self.classes.get(cls, 0) + 1


@dataclass
class _Thread:
    """A game thread of cutechess's game manager: the two engines it keeps between games."""

    pair: frozenset[str]
    ids: dict[str, int]
    busy: bool = True


@dataclass
class _Running:
    """A game started and not finished yet."""

    event: GameStarted
    started_at: datetime


class CutechessOutput:
    """cutechess-cli's lines, PGN and EPD for one run (the `PeerOutput` of `runner-cutechess`)."""

    def __init__(self, stream: TextIO, settings: CutechessSettings,
                 errors: TextIO | None = None) -> None:
        self._out = stream
        self._err = errors
        self.settings = settings
        """What the command line asked for."""
        self._players = [_Player(name, _at(settings.time_controls, i))
                         for i, name in enumerate(settings.players)]
        self._running: dict[int, _Running] = {}
        self._finished_count = 0
        self._sprt = [0, 0, 0]  # the first player's wins, losses, draws (counted under -sprt)
        self._pgn_waiting: dict[int, str | None] = {}
        self._pgn_written: set[int] = set()
        self._pgn_next = 1
        self._threads: list[_Thread] = []
        self._engine_count = 0
        self._stopping = False
        self._ended = False
        self._opened: set[str] = set()
        self._file_error = False
        """A file could not be written: the run ended (exit status 1)."""
        self.stop_run = False
        """Set when the run must end here (the driver's `STOP_RUN`): a file that cannot be
        written."""

    # -- PeerOutput ---------------------------------------------------------------------

    def resumed(self, games: Sequence[GameFinished]) -> None:
        """Count the games an earlier run stored, silently: the tallies and the next game
        numbers continue from them; the PGN and EPD files are first made to hold them
        (`runner.dropin.keptfiles`: a run killed between storing a game and writing it)."""
        settings = self.settings
        texts, positions = [], []
        for event in games:
            number = event.job.index + 1
            end = self._end_of(event)
            self._finished_count += 1
            self._score(event.job.white, event.job.black, end)
            self._pgn_written.add(number)
            if event.record is not None:
                texts.append(cutechess_pgn(event.record, end, event=settings.event,
                                           site=settings.site, round_=event.job.round,
                                           variant=settings.variant, mode=settings.pgn_mode))
                if event.record.final_fen:
                    positions.append(event.record.final_fen + "\n")
        try:
            if settings.pgn_out:
                repair_games(settings.pgn_out, texts)
            if settings.epd_out:
                repair_lines(settings.epd_out, positions)
        except OutputFileError as exc:
            self._file_failed(exc)
        self._advance_pgn()

    def game_started(self, event: GameStarted) -> None:
        """`Started game N of M (White vs Black)`."""
        if self._ended:
            return
        number = event.job.index + 1
        self._running[number] = _Running(event, datetime.now(UTC))
        self._player(event.job.white)
        self._player(event.job.black)
        self._engines_for(event.job.white, event.job.black)
        total = self.settings.final_game_count
        self._line(f"Started game {number} of {'?' if total is None else max(total, number)} "
                   f"({event.job.white} vs {event.job.black})")

    def game_finished(self, event: GameFinished) -> None:
        """`Finished game N (White vs Black): R {reason}`, the score line, the PGN and EPD
        records, and the ratings or outcomes when their interval is reached."""
        if self._ended:
            return
        number = event.job.index + 1
        running = self._running.pop(number, None)
        if event.replay:
            # A runner-side failure: the game is played again under the same number.
            self._release(event.job.white, event.job.black, None)
            return
        record = event.record
        if record is None:
            record = self._bare_record(event, running)
        self._finish(number, event.job.white, event.job.black, event.job.round,
                     self._end_of(event), record)

    def notice(self, event: Notice) -> None:
        """The runner's own notices: cutechess-cli prints nothing of the kind, but for an
        engine that does not start its warning, and the match ends there, as cutechess's."""
        if isinstance(event, EngineNotStarted) and not self.stop_run:
            self._warn(f"Cannot start engine {event.engine}:\nCannot execute command: "
                       f"{' '.join(event.command)}")
            self._stopping = True
            self.stop_run = True

    def run_ended(self, outcome: RunOutcome, *, interrupted: bool) -> None:
        """The games a stop cut short as `* {No result}`, then the final ratings, outcomes
        and `Finished match`."""
        if self._ended:
            return
        for number in sorted(self._running):
            running = self._running.pop(number)
            job = running.event.job
            spec = running.event.spec or GameSpec(white_tc=TimeControl(), black_tc=TimeControl())
            record = GameRecord(white=job.white, black=job.black, spec=spec, moves=(),
                                result=Result.UNFINISHED, termination=GameTermination.ERROR,
                                reason="", started_at=running.started_at,
                                ended_at=datetime.now(UTC), final_fen="")
            self._stopping = True
            self._finish(number, job.white, job.black, job.round, CuteResult(Kind.NO_RESULT, None),
                         record)
        if not self._ended:
            self._final(outcome.error if not interrupted else None)

    def exit_code(self, outcome: RunOutcome) -> int:
        """0: cutechess-cli ends a match it started with status 0, stopped or not; 1 when the
        runner could not write a file (the run stopped there)."""
        return 1 if self._file_error else 0

    # -- one game -----------------------------------------------------------------------

    def _end_of(self, event: GameFinished) -> CuteResult:
        reason = event.record.reason if event.record is not None else event.reason
        return cute_result(event.result, event.termination, reason)

    def _finish(self, number: int, white: str, black: str, round_: int, end: CuteResult,
                record: GameRecord) -> None:
        settings = self.settings
        self._finished_count += 1
        self._score(white, black, end)
        if settings.epd_out and record.final_fen:
            self._append(settings.epd_out, record.final_fen + "\n", "EPD")
        self._write_pgn(number, record, end, round_)
        if self._file_error:
            return  # not on disk: no line says it is (the next run writes it)
        if end.detail == "Invalid result claim" and end.loser is not None:
            claim = record.reason.partition(_FALSE_CLAIM_MARK)[2]
            if claim:
                name = white if end.loser == "White" else black
                self._warn(f"{name} forfeits by invalid result claim: {claim}")
        crashed = end.kind in (Kind.DISCONNECTION, Kind.STALLED_CONNECTION)
        loser = white if end.winner == "Black" else black if end.winner == "White" else None
        self._release(white, black, loser if crashed else None)
        if crashed and not settings.recover and not self._stopping:
            # cutechess stops the tournament at the first crash without -recover; with no
            # other game running it ends at once, before this game's own lines.
            self._stopping = True
            if not self._running:
                self._final(None)
        self._line(f"Finished game {number} ({white} vs {black}): {end.verbose}")
        if len(self._players) == 2:
            first, second = self._players
            self._line(f"Score of {first.name} vs {second.name}: {first.wins} - {second.wins} - "
                       f"{first.draws}  [{_ratio(first.score, first.games * 2):.3f}] "
                       f"{first.games}")
        if settings.rating_interval and self._finished_count % settings.rating_interval == 0:
            self._line(self._ratings())
        if settings.outcome_interval and self._finished_count % settings.outcome_interval == 0:
            self._line(self._outcomes())
        if self._stopping and not self._running and not self._ended:
            self._final(None)

    def _score(self, white: str, black: str, end: CuteResult) -> None:
        w, b = self._player(white), self._player(black)
        iw, ib = self._players.index(w), self._players.index(b)
        if end.winner == "White":
            w.add(True, 2)
            b.add(False, 0)
            self._sprt_add(0 if iw == 0 else 1)
        elif end.winner == "Black":
            b.add(False, 2)
            w.add(True, 0)
            self._sprt_add(0 if ib == 0 else 1)
        elif end.is_draw:
            w.add(True, 1)
            b.add(False, 1)
            self._sprt_add(2)
        self._add_outcome(w, b, end)

    def _sprt_add(self, slot: int) -> None:
        if self.settings.sprt is not None:
            self._sprt[slot] += 1

    def _add_outcome(self, white: _Player, black: _Player, end: CuteResult) -> None:
        text = end.description
        if end.winner is None:
            cls = end.kind.value
            if end.kind is Kind.DRAW:
                cls = next((c for word, c in _DRAW_CLASSES if word in text), "OtherD")
            else:
                cls = _KIND_CLASS.get(end.kind, cls)
            white.add_outcome(cls, text)
            black.add_outcome(cls, text)
            return
        winner, loser = (white, black) if end.winner == "White" else (black, white)
        if end.kind is Kind.ADJUDICATION and "result claim" in text:
            winner.add_outcome(_OTHER_WIN, f"Win: {text}")
            loser.add_outcome(_WRONG_CLAIM, f"Loss: {text}")
        elif end.kind in (Kind.WIN, Kind.AGREEMENT, Kind.RESIGNATION, Kind.ADJUDICATION):
            winner.add_outcome(_REGULAR_WIN, f"Win: {text}")
            loser.add_outcome(_REGULAR_LOSS, f"Loss: {text}")
        else:
            winner.add_outcome(_OTHER_WIN, f"Win: {text}")
            loser.add_outcome(_KIND_CLASS.get(end.kind, end.kind.value), f"Loss: {text}")

    def _bare_record(self, event: GameFinished, running: _Running | None) -> GameRecord:
        """A record for an event that carries none (moves unknown)."""
        job = event.job
        spec = (running.event.spec if running is not None else None) or GameSpec(
            white_tc=TimeControl(), black_tc=TimeControl())
        now = datetime.now(UTC)
        return GameRecord(white=job.white, black=job.black, spec=spec, moves=(),
                          result=event.result, termination=event.termination,
                          reason=event.reason, started_at=running.started_at if running else now,
                          ended_at=now, final_fen="")

    # -- engines (for `Terminating process of engine X(N)`) --------------------------------

    def _engines_for(self, white: str, black: str) -> None:
        """Give the game's engines cutechess's instance numbers: a free game thread of the
        same two players keeps its engines (a crashed one is started anew), else a new
        thread starts both, White first."""
        pair = frozenset((white, black))
        thread = next((t for t in self._threads if not t.busy and t.pair == pair), None)
        if thread is None:
            thread = _Thread(pair, {})
            self._threads.append(thread)
        thread.busy = True
        for name in (white, black):
            if name not in thread.ids:
                thread.ids[name] = self._engine_count
                self._engine_count += 1

    def _release(self, white: str, black: str, crashed: str | None) -> None:
        pair = frozenset((white, black))
        thread = next((t for t in self._threads if t.busy and t.pair == pair), None)
        if thread is None:
            return
        if crashed is not None and crashed in thread.ids:
            self._line(f"Terminating process of engine {crashed}({thread.ids.pop(crashed)})")
        thread.busy = False

    # -- the ratings and outcome blocks -----------------------------------------------------

    def _player(self, name: str) -> _Player:
        for player in self._players:
            if player.name == name:
                return player
        player = _Player(name)
        self._players.append(player)
        return player

    def _ratings(self) -> str:
        """cutechess's `Tournament::results()`: the match lines or the ranking table, then
        the SPRT line."""
        players = self._players
        if len(players) == 2:
            text = self._sides(players[0])
            elo = CutechessElo(players[0].wins, players[0].losses, players[0].draws)
            text += (f"Elo difference: {qt_fixed(elo.diff, 1)} +/- {qt_fixed(elo.error_margin, 1)}"
                     f", LOS: {qt_fixed(elo.los, 1)} %, DrawRatio: "
                     f"{qt_fixed(elo.draw_ratio * 100, 1)} %")
        else:
            text = self._table()
        bounds = self.settings.sprt or SprtBounds(0.0, 0.0, 0.0, 0.0)  # cutechess's null test
        wins, losses, draws = self._sprt
        status = sprt_status(wins, losses, draws, bounds.elo0, bounds.elo1, bounds.alpha,
                             bounds.beta)
        if status.llr != 0.0 or status.lower != 0.0 or status.upper != 0.0:
            line = (f"SPRT: llr {qt_general(status.llr, 3)} "
                    f"({qt_fixed(_ratio(status.llr, status.upper) * 100, 1)}%), "
                    f"lbound {qt_general(status.lower, 3)}, ubound {qt_general(status.upper, 3)}")
            if status.accepted is not None:
                line += f" - {status.accepted} was accepted"
            text += "\n" + line
        return text

    @staticmethod
    def _sides(player: _Player) -> str:
        """The three `...      ` lines: the first player as White, as Black, and by colour."""
        out = ""
        white_games = player.white_wins + player.white_draws + player.white_losses
        white_score = 2 * player.white_wins + player.white_draws
        bw = player.wins - player.white_wins
        bl = player.losses - player.white_losses
        bd = player.draws - player.white_draws
        black_games = bw + bl + bd
        black_score = 2 * bw + bd
        if white_games > 0:
            out += (f"...      {player.name} playing White: {player.white_wins} - "
                    f"{player.white_losses} - {player.white_draws}  "
                    f"[{qt_fixed(white_score / (white_games * 2), 3)}] {white_games}\n")
        if black_games > 0:
            out += (f"...      {player.name} playing Black: {bw} - {bl} - {bd}  "
                    f"[{qt_fixed(black_score / (black_games * 2), 3)}] {black_games}\n")
        if player.games > 0:
            out += (f"...      White vs Black: {player.white_wins + bl} - "
                    f"{player.white_losses + bw} - {player.draws}  "
                    f"[{qt_fixed((white_score + 2 * black_games - black_score) / (player.games * 2), 3)}]"
                    f" {player.games}\n")
        return out

    def _table(self) -> str:
        """The ranking of more than two players in the `-resultformat` columns."""
        fmt = self.settings.result_format.strip()
        fmt = NAMED_FORMATS.get(fmt, fmt)
        for name, fields in FIELD_GROUPS:
            fmt = fmt.replace(name, fields)
        tokens = [t.replace(" ", "") for t in fmt.split(",") if t]
        gauntlet = self.settings.tournament == "gauntlet"
        seeds = max(1, min(self.settings.seeds, len(self._players) - 1)) if gauntlet else 0
        ranking: list[tuple[float, _Player]] = []
        for index, player in enumerate(self._players):
            key = -1.0
            if (index > 0 and index >= seeds) or not gauntlet:
                key = 1.0 - CutechessElo(player.wins, player.losses, player.draws).point_ratio \
                    if player.games else 2.0
            # Equal keys: a later player goes before the earlier ones (Qt's QMultiMap).
            position = next((i for i, (k, _) in enumerate(ranking) if k >= key), len(ranking))
            ranking.insert(position, (key, player))
        out = self._row(tokens, {t: FIELD_HEADERS[t][0] for t in tokens if t in FIELD_HEADERS})
        rank = -1 if gauntlet else 0
        for _, player in ranking:
            rank += 1
            out += self._row(tokens, self._fields(player, rank))
        return out

    @staticmethod
    def _row(tokens: list[str], values: dict[str, str]) -> str:
        cells = []
        for token in tokens:
            if token in SILENT_FIELDS or token not in FIELD_HEADERS:
                continue
            value = values.get(token, "")
            width = FIELD_HEADERS[token][1]
            if token in ("Score", "DScore", "wScore", "bScore", "wDScore", "bDScore"):
                cells.append(value + " " if value.endswith("%") else f"{value:>{width}} ")
            else:
                cells.append(f"{value:<{-width}} " if width < 0 else f"{value:>{width}} ")
        return "".join(cells) + "\n"

    def _fields(self, player: _Player, rank: int) -> dict[str, str]:
        elo = CutechessElo(player.wins, player.losses, player.draws)
        bw = player.wins - player.white_wins
        bl = player.losses - player.white_losses
        bd = player.draws - player.white_draws
        white = CutechessElo(player.white_wins, player.white_losses, player.white_draws)
        black = CutechessElo(bw, bl, bd)

        def pct(value: float) -> str:
            return qt_fixed(value * 100.0, 1, 6) + "%"

        counts = {"W": player.wins, "L": player.losses, "D": player.draws,
                  "wW": player.white_wins, "wL": player.white_losses, "wD": player.white_draws,
                  "bW": bw, "bL": bl, "bD": bd}
        values = {"Rank": str(rank), "Name": player.name, "Elo": qt_fixed(elo.diff, 0),
                  "Error": qt_fixed(elo.error_margin, 0), "Games": str(player.games),
                  "Points": qt_fixed(player.score / 2.0, 1), "Score": pct(elo.point_ratio),
                  "DScore": pct(elo.draw_ratio), "wScore": pct(white.point_ratio),
                  "bScore": pct(black.point_ratio), "wDScore": pct(white.draw_ratio),
                  "bDScore": pct(black.draw_ratio), "TC": player.time_control}
        values.update({k: str(v) for k, v in counts.items()})
        for token in ("Time", "Illegal", "Discon", "Stall", "WrClaim", "RegulL", "RegulW",
                      "OtherW", "DStale", "DMater", "DRepet", "DMoves", "DCount", "DAdj",
                      "DAgree", "OtherD"):
            values[token] = str(player.classes.get(token, 0))
        return values

    def _outcomes(self) -> str:
        """cutechess's `Tournament::outcomes()`: each player's outcome texts with counts."""
        out = ""
        for player in self._players:
            out += f"\nPlayer: {player.name}"
            for text in sorted(player.outcomes):
                out += f'\n   "{text}": {player.outcomes[text]}'
        return out

    def _final(self, error: str | None) -> None:
        """The end of the match: ratings and outcomes unless just printed, `Finished match`."""
        settings = self.settings
        if not settings.rating_interval or self._finished_count % settings.rating_interval:
            self._line(self._ratings())
        if not settings.outcome_interval or self._finished_count % settings.outcome_interval:
            self._line(self._outcomes())
        if error:
            self._warn(error)
        self._line("Finished match")
        self._ended = True

    # -- files and streams --------------------------------------------------------------

    def _write_pgn(self, number: int, record: GameRecord, end: CuteResult, round_: int) -> None:
        settings = self.settings
        if not settings.pgn_out:
            return
        omit = settings.pgn_finished_only and (
            end.kind is Kind.NO_RESULT
            or (self._stopping and end.kind in (Kind.DISCONNECTION, Kind.STALLED_CONNECTION)))
        self._pgn_waiting[number] = None if omit else cutechess_pgn(
            record, end, event=settings.event, site=settings.site, round_=round_,
            variant=settings.variant, mode=settings.pgn_mode)
        self._advance_pgn()

    def _advance_pgn(self) -> None:
        """Write the games that are next in number order (cutechess keeps the file in order)."""
        pgn_out = self.settings.pgn_out
        texts = []
        while True:
            if self._pgn_next in self._pgn_written:
                self._pgn_next += 1
            elif self._pgn_next in self._pgn_waiting:
                text = self._pgn_waiting.pop(self._pgn_next)
                if text is None:
                    self._warn(f"Omitted incomplete game {self._pgn_next}")
                else:
                    texts.append(text)
                self._pgn_written.add(self._pgn_next)
                self._pgn_next += 1
            else:
                break
        if texts and pgn_out:
            self._append(pgn_out, "".join(texts), "PGN")

    def _append(self, path: str, text: str, kind: str) -> None:
        """Append whole and sync: a framework may kill the process right after the game. A
        write that fails (a full disk) is cut back and ends the run with one line."""
        if self._file_error:
            return
        if path in self._opened and not os.path.exists(path):
            # cutechess keeps the file open and reopens it when someone removed it.
            self._warn(f"{kind} file {path} does not exist. Reopening...")
        self._opened.add(path)
        try:
            handle = open(path, "ab", buffering=0)  # noqa: SIM115 - closed below
        except OSError:
            self._warn(f"Could not open {kind} file {path}")
            return
        with handle:
            try:
                append_whole(handle, text.encode(), path, "a game")
            except OutputFileError as exc:
                self._file_failed(exc)

    def _file_failed(self, exc: OutputFileError) -> None:
        """A file that cannot be written ends the run: one line saying which and why."""
        stream = self._err if self._err is not None else sys.stderr
        with contextlib.suppress(OSError, ValueError):
            stream.write(f"runner-cutechess: {exc} (the games are stored; running the same "
                         "command again writes them)\n")
            stream.flush()
        self._file_error = True
        self._stopping = True
        self.stop_run = True

    def _line(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a reader that went away
            self._out.write(text + "\n")
            self._out.flush()

    def _warn(self, text: str) -> None:
        stream = self._err if self._err is not None else sys.stderr
        with contextlib.suppress(OSError, ValueError):
            stream.write(f"Warning: {text}\n")
            stream.flush()


def _ratio(a: float, b: float) -> float:
    """a / b, nan or inf when b is zero (as C prints them)."""
    if b:
        return a / b
    return float("nan") if a == 0 else float("inf") if a > 0 else float("-inf")


def _at(values: Sequence[str], index: int) -> str:
    return values[index] if index < len(values) else ""
