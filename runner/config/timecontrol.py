"""A configuration's time control: parsed once, when the configuration is read, and kept with
the words it was written in.

The words matter beyond the parse: the store keeps them in a tournament's JSON, the
fingerprint hashes them (``0:10+0.1`` and ``10+0.1`` are the same clock but different
fingerprints, and a stored run must keep its own), and problems quote them. So the setting is
its text wherever text is wanted, and carries the frozen `TimeControl` the games are played
with: a game reads `WrittenTimeControl.control` and never parses again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runner.clock import TimeControl

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = ["WrittenTimeControl"]


class WrittenTimeControl(str):
    """A time control as written (``40/60``, ``0:10+0.1``, ``st=1 timemargin=50``...), parsed.

    It compares, hashes, prints and is stored as its text; `control` is the parsed value.
    Frozen like the text: the control cannot be set again.
    """

    control: TimeControl
    """The parsed time control the games are played with."""

    def __new__(cls, text: str) -> WrittenTimeControl:
        """`text` parsed once; ValueError naming the offending token when it is no time
        control. A `WrittenTimeControl` given is returned as it is."""
        if isinstance(text, WrittenTimeControl):
            return text
        control = TimeControl.parse(text)
        written = super().__new__(cls, text)
        object.__setattr__(written, "control", control)
        return written

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a written time control is frozen (cannot set {name!r})")

    def __repr__(self) -> str:
        return f"WrittenTimeControl({str(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler,
                                     ) -> CoreSchema:
        """How pydantic reads and writes the setting: from and to its text (pydantic is
        imported only when a configuration is converted)."""
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str))
