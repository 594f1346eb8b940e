"""What `runner worker join` says on stderr when it is not a terminal (a service manager's
log): a line each time what it does changes, repeats of the same state at most once a
minute, so a worker that cannot reach its server says so without flooding the log."""

from __future__ import annotations

import pytest

from runner.fleet.client import stderr_progress


def test_a_log_gets_a_line_per_change_and_no_flood(capsys: pytest.CaptureFixture[str]) -> None:
    show = stderr_progress(every=3600.0)
    show("the server is away (ConnectError): asking again")
    show("the server is away (ConnectError): asking again")
    show("batch 4: 1/8 games uploaded")
    show("batch 4: 2/8 games uploaded")
    show("the server is away (ConnectError): asking again")
    assert capsys.readouterr().err.splitlines() == [
        "the server is away (ConnectError): asking again",
        "batch 4: 1/8 games uploaded",
        "the server is away (ConnectError): asking again"]


def test_the_same_state_is_said_again_after_the_interval(
        capsys: pytest.CaptureFixture[str]) -> None:
    show = stderr_progress(every=0.0)
    show("nothing to play now: asking again")
    show("nothing to play now: asking again")
    assert len(capsys.readouterr().err.splitlines()) == 2
