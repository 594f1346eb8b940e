"""The report's value rules, without pydantic: a figure that is not finite, a timestamp.

`runner.report.wire` applies `finite` to every payload and `runner.report.tree` writes times
with `iso_seconds`; the text and HTML renderers use the same rules without importing pydantic
(issue 38: ``runner report`` in text starts without it).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

__all__ = ["finite", "iso_seconds"]


def finite(value: Any) -> Any:
    """The inf/NaN rule: a float that is not finite becomes None; anything else is kept."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def iso_seconds(value: datetime | None) -> str | None:
    """An ISO timestamp to the second (None stays None), as the report always wrote it."""
    return None if value is None else value.isoformat(timespec="seconds")
