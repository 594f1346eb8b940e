"""A submitted engine's protocol, held against the one the allow-list gives it.

A submission may name the protocol of an engine of the engines file, but only the one the
engine speaks: the file's word, or the engine's own answer when the file gives none (the
service asks it once). ``{"use": "fairymax", "protocol": "uci"}`` would otherwise be stored
and fail when played; it is refused at submission with the protocol the engine speaks.
"""

from __future__ import annotations

from typing import Any

from runner.config.check import ConfigProblem, show_value
from runner.config.model import ENUM_ALIASES, Protocol, TournamentConfig

__all__ = ["protocol_problems", "requested_protocols"]


def requested_protocols(engines: object) -> tuple[dict[int, tuple[Any, Protocol]], object]:
    """The protocols the submitted engine entries name (by index: the value written and the
    protocol it means), and the entries without those keys, for the allow-list (or the
    engine) to decide; a value that names no protocol stays, for the CLI's checks to name."""
    if not isinstance(engines, list):
        return {}, engines
    requested: dict[int, tuple[Any, Protocol]] = {}
    stripped: list[object] = []
    for index, item in enumerate(engines):
        protocol = _protocol(item.get("protocol")) if isinstance(item, dict) else None
        if protocol is not None and isinstance(item, dict) and "use" in item:
            requested[index] = (item["protocol"], protocol)
            item = {key: value for key, value in item.items() if key != "protocol"}
        stripped.append(item)
    return requested, stripped


def protocol_problems(config: TournamentConfig, requested: dict[int, tuple[Any, Protocol]],
                      source: str) -> list[ConfigProblem]:
    """The requested protocols that contradict the one each engine speaks (an engine whose
    protocol could not be learnt here is not judged: it fails when played, saying why)."""
    problems = []
    for index, (written, protocol) in sorted(requested.items()):
        if index >= len(config.engines):
            continue
        spec = config.engines[index]
        if spec.protocol_detect or spec.protocol is protocol:
            continue
        problems.append(ConfigProblem(
            source, f"engines[{index}].protocol", show_value(written),
            f"engine {spec.name} speaks {spec.protocol.value} (the service's engines file or "
            f"the engine itself says so): leave the protocol out or give "
            f"{spec.protocol.value!r}"))
    return problems


def _protocol(value: object) -> Protocol | None:
    """The protocol a submitted value names (aliases and case as the CLI reads them)."""
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    word = ENUM_ALIASES.get(Protocol, {}).get(word, word)
    try:
        return Protocol(word)
    except ValueError:
        return None
