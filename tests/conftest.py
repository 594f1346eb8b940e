"""Shared test fixtures: where the third-party corpora live, and skip helpers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_file(*parts: str) -> Path:
    """Path of a file in ../shared/data, skipping the test with a clear reason when absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpus file {path} is absent (expected ../shared/data beside the repo)")
    return path


def require_binary(name: str) -> str:
    """Full path of an installed program, skipping the test with a clear reason when absent."""
    found = shutil.which(name) or shutil.which(name, path="/usr/games:/usr/local/games")
    if found is None:
        pytest.skip(f"{name} is not installed (CI installs it with apt-get; see .ci/run)")
    return found
