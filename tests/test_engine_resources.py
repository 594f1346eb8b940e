"""A CECP engine's `memory` and `cores` options (cutechess-cli's names) become the protocol's
own commands (`memory N`, `cores N`); anything else stays an option, refused when undeclared."""

from __future__ import annotations

from runner.config.model import EngineSpec, Protocol
from runner.tournament.runtime import engine_config


def _spec(protocol: Protocol, **options: object) -> EngineSpec:
    return EngineSpec(name="e", command=("e",), written_command=("e",), protocol=protocol,
                      options=tuple(options.items()))  # type: ignore[arg-type]


def test_memory_and_cores_of_a_cecp_engine_are_its_resources() -> None:
    config = engine_config(_spec(Protocol.CECP, memory="64", cores=2, Hash="16"))
    assert (config.memory_mb, config.cores) == (64, 2)
    assert dict(config.options) == {"Hash": "16"}


def test_what_is_not_a_whole_number_or_not_cecp_stays_an_option() -> None:
    odd = engine_config(_spec(Protocol.CECP, memory="-5", cores="٢"))
    assert (odd.memory_mb, odd.cores) == (None, None)
    assert dict(odd.options) == {"memory": "-5", "cores": "٢"}
    uci = engine_config(_spec(Protocol.UCI, memory="64"))
    assert uci.memory_mb is None and dict(uci.options) == {"memory": "64"}
