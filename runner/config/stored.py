"""Stored configurations of older runners, read as today's: the tolerant half of the JSON form.

The store keeps each tournament's `TournamentConfig.to_json`; rows written by earlier
runners used other shapes, and are rewritten here before pydantic reads them, so an old
database keeps loading without a migration:

- the first layout kept the written argv as ``command`` beside ``resolved_command``, and the
  book's name as ``openings.file`` beside its full ``path``;
- until the peers moved behind the order seam, a drop-in's schedule was stored under the name
  of the program it copies (``fastchess_order``, ``cutechess``), both keys present (null) in
  every row; today it is one `PlayOrder` named by its style (``order``), and cutechess-cli's
  ``wait_ms`` is the tournament's ``start_delay_ms``;
- until the peers left the statistics, the SPRT model of ``runner-cutechess`` was stored as
  ``cutechess`` (`LEGACY_MODEL_WORDS`); today it is named for what it is, ``scaled-bayeselo``.

The fingerprint keeps the older names (runner.config.fingerprint): a stored run must keep its
fingerprint, or a rerun would not find it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.stats import EloModel

__all__ = ["INDEX_KEY", "LEGACY_MODEL_WORDS", "STEPPED_KEY", "is_legacy_json", "upgrade_stored"]

INDEX_KEY = "fastchess_order"
"""Where rows before the order seam kept an INDEX order (the fingerprint still hashes it so)."""
STEPPED_KEY = "cutechess"
"""Where rows before the order seam kept a STEPPED order (the fingerprint still hashes it so)."""
LEGACY_MODEL_WORDS = {"cutechess": EloModel.SCALED_BAYESELO.value}
"""SPRT model words older runners stored (and a TOML file may still write), as today's."""


def is_legacy_json(data: Mapping[str, Any]) -> bool:
    """Whether `data` was stored by a runner before `to_json` kept every setting.

    Such data has no engine ``env`` or ``castling960``: they come back as their defaults.
    """
    engines = data.get("engines")
    return isinstance(engines, list) and any(
        isinstance(entry, Mapping) and "resolved_command" in entry for entry in engines)


def upgrade_stored(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """Data in any older stored layout rewritten to `to_json`'s (other data unchanged)."""
    return _upgrade_sprt(_upgrade_order(_upgrade_first_layout(data)))


def _upgrade_sprt(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row whose SPRT model has an older word, with today's."""
    sprt = data.get("sprt")
    if not isinstance(sprt, Mapping) or not isinstance(sprt.get("model"), str):
        return data
    word = LEGACY_MODEL_WORDS.get(sprt["model"].lower())
    if word is None:
        return data
    return {**data, "sprt": {**sprt, "model": word}}


def _upgrade_order(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row with the peer-named order keys as one ``order`` (and ``start_delay_ms``)."""
    if INDEX_KEY not in data and STEPPED_KEY not in data:
        return data
    upgraded = dict(data)
    index = upgraded.pop(INDEX_KEY, None)
    stepped = upgraded.pop(STEPPED_KEY, None)
    if isinstance(index, Mapping):
        upgraded["order"] = {"style": "index", "swap": not index.get("noswap", False),
                             "reverse": index.get("reverse", False),
                             "seeds": index.get("seeds", 1)}
    elif isinstance(stepped, Mapping):
        stepped = dict(stepped)
        upgraded["start_delay_ms"] = stepped.pop("wait_ms", 0)
        upgraded["order"] = {"style": "stepped", **stepped}
    elif index is not None or stepped is not None:
        # Neither a table nor null: kept under its old key, for pydantic to name it.
        upgraded[INDEX_KEY if index is not None else STEPPED_KEY] = (
            index if index is not None else stepped)
    return upgraded


def _upgrade_first_layout(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row of the first layout (``resolved_command``, ``openings.path``) as today's."""
    if not is_legacy_json(data):
        return data
    upgraded = dict(data)
    engines = []
    for entry in data["engines"]:
        entry = dict(entry)
        entry["written_command"] = entry.pop("command", ())
        entry["command"] = entry.pop("resolved_command")
        engines.append(entry)
    upgraded["engines"] = engines
    openings = data.get("openings")
    if isinstance(openings, Mapping) and "path" in openings:
        openings = dict(openings)
        openings["file"] = openings.pop("path")
        upgraded["openings"] = openings
    return upgraded
