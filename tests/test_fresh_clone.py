"""A fresh clone has no ../shared beside it: the tests that need its corpora skip, each
saying what is missing (pytest's own "got empty parameter set" names nothing)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

# The modules whose test cases are made from the files found in ../shared/data.
LISTED_FROM_SHARED = ["tests/test_cecp.py", "tests/test_pgn_reader.py", "tests/test_stats.py"]


def test_cases_listed_from_shared_data_skip_with_a_reason_without_it(tmp_path: Path) -> None:
    clone = tmp_path / "clone"  # its parent holds no shared/ directory
    shutil.copytree(REPO / "tests", clone / "tests",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", clone)
    run = subprocess.run(
        # One process: the -n auto of addopts would start a worker per core inside this
        # test's own worker, for three files.
        [sys.executable, "-m", "pytest", "-q", "-rs", "-n", "0", "-p", "no:cacheprovider",
         "-k", "shared-data-absent", *LISTED_FROM_SHARED],
        cwd=clone, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "empty parameter set" not in run.stdout
    skipped = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert {line.split()[2].split(":")[0] for line in skipped} == set(LISTED_FROM_SHARED)
    assert all("expected ../shared/data beside the repo" in line for line in skipped), run.stdout
