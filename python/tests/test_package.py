"""The package's surface: the stubs of the native module cover exactly what it exports (names
and methods), every public name has a docstring, and the README's Python snippet runs."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import zeppelin
from zeppelin import _native

PACKAGE = Path(zeppelin.__file__).parent
README = Path(__file__).resolve().parents[2] / "README.md"


def stub_names() -> dict[str, set[str]]:
    tree = ast.parse((PACKAGE / "_native.pyi").read_text())
    names: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef) and n.name != "__new__"
            }
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = set()
    return names


def test_native_stubs_match_the_module():
    stubs = stub_names()
    exported = {n for n in dir(_native) if not n.startswith("_")}
    assert set(stubs) == exported
    for name, members in stubs.items():
        obj = getattr(_native, name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            native = {n for n in dir(obj) if not n.startswith("_")}
            assert members == native, name


def test_typed_package_and_docstrings():
    assert (PACKAGE / "py.typed").is_file()
    assert zeppelin.__doc__
    for name in zeppelin.__all__:
        obj = getattr(zeppelin, name)
        assert obj.__doc__, name
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for member, value in vars(obj).items():
                if not member.startswith("_") and callable(value):
                    assert value.__doc__, f"{name}.{member}"


def test_readme_python_snippet_runs(tmp_path, monkeypatch):
    text = README.read_text()
    blocks = re.findall(r"<!-- python-snippet -->\s*```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "README.md has one ```python block after <!-- python-snippet -->"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert (tmp_path / "my-keys" / "device.sk").is_file()
