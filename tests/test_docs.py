"""The docs stay true to the code they describe: the README's length and test command (the one
CI runs), the links between the pages, the room table and layers diagram of
docs/development.md against the import-linter contract, and the compiled modules' docstrings."""

from __future__ import annotations

import ast
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from runner.compiled import COMPILED
from tests.conftest import REPO

README = REPO / "README.md"
DEVELOPMENT = REPO / "docs" / "development.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
TEST_COMMAND = "pip install -e '.[test]' && pytest"
"""The README's second quick-start command, which .ci/run must run word for word."""

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings (lower case, punctuation dropped, spaces
    to hyphens)."""
    out = set()
    in_code = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def test_the_readme_is_a_guide_of_at_most_300_lines() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move the detail to docs/"


def test_ci_runs_the_readme_s_test_command_and_the_slow_tests_on_request() -> None:
    readme = README.read_text()
    assert f"```sh\n{TEST_COMMAND}\n```" in readme, "the README's test command changed"
    steps = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert TEST_COMMAND in steps, ".ci/run no longer runs the README's test command word for word"
    after = steps[steps.index(TEST_COMMAND):]
    assert "pytest -m slow" in after, ".ci/run must offer the slow tests after the README's command"
    assert after[after.index("pytest -m slow") - 1].startswith('if [ "${RUNNER_CI_SLOW'), \
        "the slow tests are CI's only on request (RUNNER_CI_SLOW=1): CI stays under 20 minutes"


def test_slow_tests_are_left_out_of_the_default_run() -> None:
    addopts = shlex.split(_pyproject()["tool"]["pytest"]["ini_options"]["addopts"])
    assert addopts[addopts.index("-m") + 1] == "not slow", addopts


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_names_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for target in _LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not ours to check here
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def _layers() -> list[list[str]]:
    """The layers contract's rooms, top first, each line's rooms without the package prefix."""
    contracts = _pyproject()["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    return [[room.strip().removeprefix("runner.") for room in line.split("|")] for line in layers]


def test_the_development_page_draws_the_layers_contract() -> None:
    drawn = "  >  ".join(" | ".join(line) for line in _layers())
    assert f"```\n{drawn}\n```" in DEVELOPMENT.read_text(), (
        f"the layers in pyproject.toml changed: update docs/development.md's diagram to\n{drawn}")


def test_the_room_table_has_a_row_for_every_room_and_every_row_exists() -> None:
    rows = re.findall(r"^\| `runner/([\w.]+?)/?` \|", DEVELOPMENT.read_text(), re.M)
    rooms = {room for line in _layers() for room in line}
    listed = {row.removesuffix(".py") for row in rows}
    assert listed == rooms, (f"docs/development.md's room table: missing {sorted(rooms - listed)}, "
                             f"not rooms {sorted(listed - rooms)}")
    for row in rows:
        assert (REPO / "runner" / row).exists(), row


@pytest.mark.parametrize("name", COMPILED)
def test_every_compiled_module_says_so_in_its_docstring(name: str) -> None:
    source = (REPO / Path(*name.split("."))).with_suffix(".py").read_text()
    docstring = ast.get_docstring(ast.parse(source)) or ""
    assert "Compiled by mypyc" in docstring and "RUNNER_PURE=1" in docstring, name
