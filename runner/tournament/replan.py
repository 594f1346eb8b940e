"""A tournament continued with a changed configuration (``--force``): what changed, in words,
and where each game already played belongs in the new schedule.

What ``--force`` does with each kind of change:

- an engine added: its engine row is created and its games are scheduled;
- an engine removed: its games played so far stay in the database (and the PGN file) but
  leave the schedule and the standings (stored as ``excluded``);
- more rounds: the new rounds are played; fewer rounds: games of the rounds dropped are
  kept but excluded, so "N of M games" never exceeds M;
- another time control, engine command or option, adjudication, openings or SPRT: the new
  settings apply to the games still to play; games played keep what they were played with.

A played game keeps its place when the new schedule has a game with the same round and the
same engines on the same colours (the k-th such game of the round stays the k-th); a game the
new schedule has no place for is excluded, and comes back if a later change restores it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from runner.config.check import ConfigError
from runner.config.model import TournamentConfig
from runner.store import Placement, PlayedRow
from runner.tournament.schedule import Schedule

__all__ = ["changes", "placements"]

_Identity = tuple[int, str, str, int]
"""Round, White, Black, and which such game of the round (0 for the first)."""


def changes(stored: Mapping[str, Any], config: TournamentConfig) -> list[str]:
    """What differs between a stored configuration and `config`, each with what ``--force``
    does about it."""
    try:
        before = TournamentConfig.from_json(stored).game_defining()
    except ConfigError:
        return ["the stored configuration cannot be read: the new one replaces it"]
    after = config.game_defining()
    said: list[str] = []
    old = {e["name"]: e for e in before["engines"]}
    new = {e["name"]: e for e in after["engines"]}
    if added := [name for name in new if name not in old]:
        said.append(f"engine(s) added: {', '.join(added)} (their games are scheduled)")
    if removed := [name for name in old if name not in new]:
        said.append(f"engine(s) removed: {', '.join(removed)} (their games played so far stay "
                    "in the database but leave the schedule and the standings)")
    for name in new:
        if name in old and old[name] != new[name]:
            keys = sorted(k for k in new[name].keys() | old[name].keys()
                          if old[name].get(k) != new[name].get(k))
            said.append(f"engine {name} changed ({', '.join(keys)}): applies to the games "
                        "still to play")
    if before["format"] != after["format"]:
        said.append(f"format {before['format']} -> {after['format']}")
    if before["rounds"] != after["rounds"]:
        fewer = after["rounds"] < before["rounds"]
        said.append(f"rounds {before['rounds']} -> {after['rounds']}" + (
            " (games of the rounds dropped stay in the database but are not counted)"
            if fewer else ""))
    if before["games"] != after["games"]:
        said.append(f"games per encounter {before['games']} -> {after['games']}")
    if before["tc"] != after["tc"]:
        said.append(f"time control {before['tc']} -> {after['tc']} (applies to the games "
                    "still to play; games played keep theirs)")
    for key in ("variant", "openings", "adjudication", "sprt"):
        if before[key] != after[key]:
            said.append(f"{key} changed (applies to the games still to play)")
    return said or ["settings changed"]


def placements(played: Sequence[PlayedRow], pairing: Schedule) -> dict[int, Placement | None]:
    """Each played game's place in the new schedule (None: none; it is excluded)."""
    slots: dict[_Identity, Placement] = {}
    seen: Counter[tuple[int, str, str]] = Counter()
    for game in pairing:
        key = (game.round, game.white, game.black)
        slots[(*key, seen[key])] = Placement(game.index, game.round, game.pair,
                                             game.game_in_pair, game.opening_index)
        seen[key] += 1
    taken: Counter[tuple[int, str, str]] = Counter()
    result: dict[int, Placement | None] = {}
    for row in played:  # counted games first, in schedule order: they keep their rank
        key = (row.round, row.white, row.black)
        result[row.id] = slots.get((*key, taken[key]))
        if result[row.id] is not None:
            taken[key] += 1
    return result
