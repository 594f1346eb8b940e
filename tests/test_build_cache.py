"""Installing again does not compile again what nothing changed (issue 39).

``pip install '.[service]'`` in a checkout whose compiled modules were built already compiled
them all again (246 s on a loaded machine). setup.py's build command keeps each extension it
builds under the digest of what it was built from and copies it when asked for the same
again. Tested with the build command itself on a small real C extension: built by the
system's C compiler, reused from the cache on the next build, compiled again once its source
changes.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

SOURCE = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *answer(PyObject *self, PyObject *args) { return PyLong_FromLong(%d); }
static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, "The answer."}, {NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "%s", NULL, -1, methods};
PyMODINIT_FUNC PyInit_%s(void) { return PyModule_Create(&module); }
"""


@pytest.fixture(scope="module")
def setup_module() -> dict[str, Any]:
    """setup.py's names, read without running setup() (it runs only as __main__)."""
    names = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_under_test")
    if not names["_compiler_works"]():
        pytest.skip("no working C compiler with Python's headers here")
    return names


def _build(setup_module: dict[str, Any], tmp: Path, name: str, lib: str,
           compiled: list[str]) -> Path:
    """Build the extension `name` from tmp/NAME.c into tmp/LIB with the project's build
    command; the names of the extensions it compiled are appended to `compiled`."""
    from setuptools import Distribution, Extension

    class Counting(setup_module["OptionalBuildExt"]):  # type: ignore[misc,name-defined]
        cache_dir = tmp / "cache"

        def _compile(self, ext: Extension) -> None:
            compiled.append(ext.name)
            super()._compile(ext)

    dist = Distribution({"name": "probe", "ext_modules": [
        Extension(name, [str(tmp / f"{name}.c")])]})
    command = Counting(dist)
    command.build_lib = str(tmp / lib)
    command.build_temp = str(tmp / f"{lib}-temp")
    command.ensure_finalized()
    command.run()
    return Path(command.get_ext_fullpath(name))


def _answer(path: Path, name: str) -> int:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.pop(name, None)
    return int(module.answer())


@pytest.mark.timeout(300)
def test_an_extension_built_before_is_reused_and_a_changed_one_compiled(
        setup_module: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNNER_COMPILE", "1")  # a failure raises, never falls back silently
    name = "cacheprobe"
    (tmp_path / f"{name}.c").write_text(SOURCE % (41, name, name))
    compiled: list[str] = []
    first = _build(setup_module, tmp_path, name, "lib1", compiled)
    assert compiled == [name] and _answer(first, name) == 41
    assert len(list((tmp_path / "cache").iterdir())) == 1

    # Another build (a second install: the wheel's, then an editable one) of the same source.
    again = _build(setup_module, tmp_path, name, "lib2", compiled)
    assert compiled == [name], "the unchanged extension was compiled again"
    assert again != first and again.read_bytes() == first.read_bytes()
    assert _answer(again, name) == 41

    (tmp_path / f"{name}.c").write_text(SOURCE % (42, name, name))
    changed = _build(setup_module, tmp_path, name, "lib3", compiled)
    assert compiled == [name, name]
    assert _answer(changed, name) == 42
    assert len(list((tmp_path / "cache").iterdir())) == 2
