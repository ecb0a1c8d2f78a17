"""docs/architecture.md lists every package and module of the tree, one line each."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module_map():  # tools/ is not a package: load the generator by its path
    spec = importlib.util.spec_from_file_location("module_map", ROOT / "tools" / "module_map.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_module_map_in_the_architecture_doc_matches_the_tree() -> None:
    tool = _module_map()
    written = tool.current_block(tool.DOC.read_text(encoding="utf-8"))
    assert written == tool.module_map(), (
        "docs/architecture.md's module map is out of date: run python tools/module_map.py"
    )


def test_every_package_says_what_it_is_for() -> None:
    tool = _module_map()
    missing = [
        str(init.parent.relative_to(ROOT))
        for package in tool.PACKAGES
        for init in (ROOT / package).rglob("__init__.py")
        if not set(init.relative_to(ROOT).parts) & tool.SKIP and not tool._summary(init)
    ]
    assert missing == [], f"packages without a docstring in their __init__.py: {missing}"
