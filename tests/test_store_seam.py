"""The store object under every room (issue 37): what the rooms above the store take from it.

The import-linter contract in pyproject.toml lets `runner.tournament`, `runner.report` and
`runner.app` import the store object's module and the `runner.store` package, and nothing else
of the store nor SQLAlchemy; a contract sees modules, not names, so this test holds the names
they take from the package to the light records it re-exports (never a function that works in
a session). It also checks that the sqlite3 way of writing a game stands on its own: it imports
neither SQLAlchemy nor SQLAlchemy's way of writing (the two used to import each other).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import runner
import runner.store as store_package

ROOT = Path(runner.__file__).parent
ROOMS = ("tournament", "report", "app")
LIGHT_HOMES = ("runner.store.records", "runner.store.reads", "runner.store.quick",
               "runner.store.store")
"""The modules whose names the rooms above may take from the package."""


def _package_imports(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every name `path` takes from the `runner.store` package itself."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "runner.store" and node.level == 0:
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


def test_the_rooms_above_take_only_light_records_and_the_store_object_from_the_package() -> None:
    allowed = {name for module, names in store_package._HOMES.items() if module in LIGHT_HOMES
               for name in names}
    assert {"JobKey", "TournamentStatus", "never_moved", "quick_list", "Store"} <= allowed
    assert not allowed & {"record_game", "create_tournament", "open_database", "stream_games"}
    seen: dict[str, list[str]] = {}
    wrong = []
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            for line, name in _package_imports(path):
                seen.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{line}")
                if name not in allowed:
                    wrong.append(f"{path.relative_to(ROOT)}:{line} takes {name}")
    assert not wrong, wrong
    assert seen, "no room imports the package: the check above checked nothing"


def test_the_sqlite3_writes_import_neither_sqlalchemy_nor_its_way_of_writing() -> None:
    code = ("import sys, runner.store.fast, runner.store.rows\n"
            "print(sorted(n for n in sys.modules if n.startswith('sqlalchemy')"
            " or n == 'runner.store.recording'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
