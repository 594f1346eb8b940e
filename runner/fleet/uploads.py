"""A finished game as a worker uploads it: the body of ``POST .../batches/{id}/games``.

One encoder for every sender (``runner worker join``, the fleet's tests, the load benchmark):
the record's own JSON text placed in the body as it is, not parsed into a dictionary and
dumped again.
"""

from __future__ import annotations

import dataclasses
import json
import math

from runner.game.record import GameRecord

__all__ = ["upload_body"]


def upload_body(index: int, record: GameRecord, seconds: float,
                limit: int | None = None) -> bytes:
    """The upload of game `index` (an `Upload`: its place in the schedule, the seconds it
    took, its record), as UTF-8 JSON; over `limit` bytes, the record goes without the
    engines' transcripts (they are what makes a record long)."""
    taken = float(seconds) if math.isfinite(seconds) and seconds >= 0 else 0.0
    body = _encode(index, record, taken)
    if limit is not None and len(body) > limit:
        body = _encode(index, dataclasses.replace(record, protocol_lines=((), ())), taken)
    return body


def _encode(index: int, record: GameRecord, seconds: float) -> bytes:
    return (f'{{"index": {int(index)}, "seconds": {json.dumps(seconds)}, '
            f'"record": {record.to_json()}}}').encode()
