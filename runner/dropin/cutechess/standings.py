"""cutechess-cli's standings of a match: the players' tallies and the blocks printed of them.

The tallies are cutechess 1.5.1's `TournamentPlayer` counts (wins, losses and draws, as White
and in all, each outcome's text and class); the blocks are `Tournament::results()` (the
per-colour lines, ``Elo difference``, the ranking table in the ``-resultformat`` columns, the
``SPRT:`` line) and `Tournament::outcomes()`. The output (`runner.dropin.cutechess.output`)
decides when to print them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from runner.dropin.cutechess.results import (
    FIELD_GROUPS,
    FIELD_HEADERS,
    NAMED_FORMATS,
    SILENT_FIELDS,
    CuteResult,
    Kind,
    qt_fixed,
    qt_general,
)
from runner.dropin.cutechess.settings import CutechessSettings, SprtBounds
from runner.dropin.cutechess.stats import CutechessElo, sprt_status

__all__ = ["CuteStandings", "Player"]

# Outcome classes of the table's counters (cutechess's result types and its extra ones).
_REGULAR_WIN, _REGULAR_LOSS, _OTHER_WIN, _WRONG_CLAIM = "RegulW", "RegulL", "OtherW", "WrClaim"
_DRAW_CLASSES = (("stalemate", "DStale"), ("material", "DMater"), ("repetition", "DRepet"),
                 ("moves rule", "DMoves"), ("counting rules", "DCount"))
_KIND_CLASS = {Kind.TIMEOUT: "Time", Kind.ILLEGAL_MOVE: "Illegal",
               Kind.DISCONNECTION: "Discon", Kind.STALLED_CONNECTION: "Stall",
               Kind.ADJUDICATION: "DAdj", Kind.AGREEMENT: "DAgree"}


@dataclass
class Player:
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
        """Games played."""
        return self.wins + self.losses + self.draws

    @property
    def score(self) -> int:
        """Half points."""
        return self.wins * 2 + self.draws

    def add(self, white: bool, half_points: int) -> None:
        """Count a game of `half_points` (2 a win), played as White when `white`."""
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
        """Count a game's outcome: its text, and its class for the table's counters."""
        self.outcomes[text] = self.outcomes.get(text, 0) + 1
        self.classes[cls] = self.classes.get(cls, 0) + 1


class CuteStandings:
    """The players' tallies of one match, in command-line order, and the SPRT's counts."""

    def __init__(self, settings: CutechessSettings) -> None:
        self.settings = settings
        self.players = [Player(name, _at(settings.time_controls, i))
                        for i, name in enumerate(settings.players)]
        """Every player's tallies, in command-line order."""
        self._sprt_counts = [0, 0, 0]
        """The first player's wins, losses, draws (counted under -sprt)."""

    def score_line(self) -> str | None:
        """The ``Score of A vs B`` line of a two-player match (None with more players)."""
        if len(self.players) != 2:
            return None
        first, second = self.players
        return (f"Score of {first.name} vs {second.name}: {first.wins} - {second.wins} - "
                f"{first.draws}  [{_ratio(first.score, first.games * 2):.3f}] {first.games}")

    def score(self, white: str, black: str, end: CuteResult) -> None:
        """Count a finished game: both players' tallies, the SPRT's and the outcome classes."""
        w, b = self.player(white), self.player(black)
        iw, ib = self.players.index(w), self.players.index(b)
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
            self._sprt_counts[slot] += 1

    def _add_outcome(self, white: Player, black: Player, end: CuteResult) -> None:
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

    def player(self, name: str) -> Player:
        """A player's tallies (a name not on the command line is added)."""
        for player in self.players:
            if player.name == name:
                return player
        player = Player(name)
        self.players.append(player)
        return player

    def ratings(self) -> str:
        """cutechess's `Tournament::results()`: the match lines or the ranking table, then
        the SPRT line."""
        players = self.players
        if len(players) == 2:
            text = self._sides(players[0])
            elo = CutechessElo(players[0].wins, players[0].losses, players[0].draws)
            text += (f"Elo difference: {qt_fixed(elo.diff, 1)} +/- {qt_fixed(elo.error_margin, 1)}"
                     f", LOS: {qt_fixed(elo.los, 1)} %, DrawRatio: "
                     f"{qt_fixed(elo.draw_ratio * 100, 1)} %")
        else:
            text = self._table()
        bounds = self.settings.sprt or SprtBounds(0.0, 0.0, 0.0, 0.0)  # cutechess's null test
        wins, losses, draws = self._sprt_counts
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
    def _sides(player: Player) -> str:
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
        seeds = max(1, min(self.settings.seeds, len(self.players) - 1)) if gauntlet else 0
        ranking: list[tuple[float, Player]] = []
        for index, player in enumerate(self.players):
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

    def _fields(self, player: Player, rank: int) -> dict[str, str]:
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

    def outcomes(self) -> str:
        """cutechess's `Tournament::outcomes()`: each player's outcome texts with counts."""
        out = ""
        for player in self.players:
            out += f"\nPlayer: {player.name}"
            for text in sorted(player.outcomes):
                out += f'\n   "{text}": {player.outcomes[text]}'
        return out


def _ratio(a: float, b: float) -> float:
    """a / b, nan or inf when b is zero (as C prints them)."""
    if b:
        return a / b
    return float("nan") if a == 0 else float("inf") if a > 0 else float("-inf")


def _at(values: Sequence[str], index: int) -> str:
    return values[index] if index < len(values) else ""
