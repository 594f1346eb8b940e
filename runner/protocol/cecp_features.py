"""The features a CECP engine announces at start-up, and our answer to each.

`CecpFeatures` keeps the values with the protocol's defaults (`flag`, `text`) and the
options declared with ``feature option=``; `record` takes one ``feature`` line's pairs
and gives the ``accepted``/``rejected`` lines to send back.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping

from runner.protocol.cecp_parse import parse_option
from runner.protocol.engine import EngineOption

__all__ = ["ACCEPTED", "CecpFeatures"]

ACCEPTED = frozenset(
    {
        "ping", "setboard", "playother", "usermove", "time", "draw", "sigint", "sigterm",
        "reuse", "analyze", "myname", "variants", "colors", "ics", "name", "pause", "nps",
        "debug", "memory", "smp", "egt", "option", "exclude", "setscore", "san",
    }
)
"""Features we implement and therefore accept; anything else is rejected."""


class CecpFeatures(Mapping[str, str]):
    """Feature values an engine announced (a mapping of them), with the protocol's defaults."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self.options: dict[str, EngineOption] = {}
        self.seen_any = False
        self.done: int | None = None
        self.done0_at = 0.0
        """When the engine said ``done=0`` (monotonic): its wait for ``done=1`` starts then."""

    def __getitem__(self, name: str) -> str:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def flag(self, name: str, default: bool) -> bool:
        """A boolean feature (``1``/``0``), or its default when the engine said nothing."""
        value = self._values.get(name)
        return default if value is None else value.strip() == "1"

    def text(self, name: str) -> str | None:
        """A string feature, or None when the engine did not set it."""
        return self._values.get(name)

    @property
    def variants(self) -> tuple[str, ...] | None:
        """The variants the engine plays, None if it did not say (then: all)."""
        value = self._values.get("variants")
        return None if value is None else tuple(v.strip() for v in value.split(",") if v.strip())

    def record(self, pairs: tuple[tuple[str, str], ...]) -> list[str]:
        """Take the NAME=VALUE pairs of one feature line; the answer line for each."""
        answers = []
        for name, value in pairs:
            if name == "done":
                self.done = 1 if value.strip() == "1" else 0
                if self.done == 0:
                    self.done0_at = time.monotonic()
                continue
            self.seen_any = True
            if name == "option":
                try:
                    spec = parse_option(value)
                except ValueError:
                    answers.append("rejected option")
                    continue
                self.options[spec.name] = spec
                answers.append("accepted option")
                continue
            if name == "san" and value.strip() == "1":
                # We send coordinate moves only; engines still may print SAN (flagged).
                answers.append("rejected san")
                continue
            if name in ACCEPTED:
                self._values[name] = value
                answers.append(f"accepted {name}")
            else:
                answers.append(f"rejected {name}")
        return answers
