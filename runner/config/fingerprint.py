"""The fingerprint's view of a tournament: a projection of the one serializer's data.

`TournamentConfig.to_json` writes every setting; the fingerprint hashes the part of it that
decides which games are played and how (`game_defining`), so that a resumed run can tell a
changed configuration. It is read from the JSON data, not from the objects: one serializer,
and the same settings give the same fingerprint whether the configuration was just read or
loaded from the store (an integer written into a float field is a float in both).

The view keeps the shape older runners hashed, so that every stored run keeps its
fingerprint (and a drop-in finds its run again):

- a book by its file name (a run moves to another directory), an engine's command as written;
- a setting added since is present only when it is not its default (``ponder``,
  ``white_pov``, the CECP dialogue of a CECP engine, tablebases, ``sprt_trinomial``,
  ``move_ceiling``), so a run stored before it keeps its hash;
- an order style under the key of the program it copies (``fastchess_order``, ``cutechess``)
  and a renamed SPRT model under its older word (runner.config.stored reads both back).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from runner.config.stored import INDEX_KEY, LEGACY_MODEL_WORDS, STEPPED_KEY

__all__ = ["game_defining"]

_STEPPED_DEFINING = ("tournament", "games", "rounds", "repeat", "policy", "swap", "reverse",
                     "seeds", "srand")
"""A STEPPED order's settings in the fingerprint (all but its start delay, as before)."""
_MODEL_WORDS = {new: old for old, new in LEGACY_MODEL_WORDS.items()}
"""The word each renamed SPRT model keeps in the fingerprint."""
_OPENINGS_DEFINING = ("format", "order", "seed", "plies", "start")
_ENGINE_DEFINING = ("name", "protocol", "tc", "init_strings", "options")
_ENGINE_WHEN_ON = ("ponder", "white_pov")


def game_defining(data: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of `data` (what `TournamentConfig.to_json` writes) that decide which
    games are played and how, in the shape the fingerprint hashes."""
    openings = data["openings"]
    adjudication = data["adjudication"]
    return {
        "format": data["format"],
        "engines": [_engine(entry) for entry in data["engines"]],
        "tc": data["tc"], "rounds": data["rounds"], "games": data["games"],
        "variant": data["variant"],
        "openings": None if openings is None else {
            "file": PurePath(openings["file"]).name,
            **{key: openings[key] for key in _OPENINGS_DEFINING}},
        "adjudication": {
            **{key: adjudication[key] for key in ("draw", "resign", "maxmoves", "tb")},
            # Where the tables live is left out, as the book's folder is.
            **({"tablebases": {"pieces": adjudication["tbpieces"],
                               "ignore50": adjudication["tbignore50"],
                               "results": adjudication["tbadjudicate"]}}
               if adjudication["tablebases"] else {}),
        },
        "sprt": _sprt(data["sprt"]),
        **_order(data["order"]),
        **({"sprt_trinomial": True} if data["sprt_trinomial"] else {}),
        **({"move_ceiling": data["move_ceiling"]} if data["move_ceiling"] is not None else {}),
    }


def _engine(entry: Mapping[str, Any]) -> dict[str, Any]:
    """One engine's part: its command as written, under ``command``."""
    return {
        **{key: entry[key] for key in _ENGINE_DEFINING},
        "command": entry["written_command"],
        **{key: True for key in _ENGINE_WHEN_ON if entry[key]},
        # A UCI engine's games do not depend on the CECP dialogue.
        **({"cecp_dialogue": entry["cecp_dialogue"]}
           if entry["cecp_dialogue"] != "full" and entry["protocol"] == "cecp" else {}),
    }


def _sprt(sprt: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The SPRT's settings, a renamed model under its older word."""
    if sprt is None:
        return None
    return {**sprt, "model": _MODEL_WORDS.get(sprt["model"], sprt["model"])}


def _order(order: Mapping[str, Any] | None) -> dict[str, Any]:
    """Nothing for the runner's own game pairs, else the order's settings under the key older
    runners hashed them with."""
    if order is None:
        return {}
    if order["style"] == "index":
        return {INDEX_KEY: {"noswap": not order["swap"], "reverse": order["reverse"],
                             "seeds": order["seeds"]}}
    return {STEPPED_KEY: {key: order[key] for key in _STEPPED_DEFINING}}
