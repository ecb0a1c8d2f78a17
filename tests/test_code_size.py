"""The house rule on size, checked on every `make test`: no module over 600 lines and no
function or method of 80 lines or more, in the production packages, the benches and the tests,
so a file or a function that outgrows one concern is split when it happens, not in a later
clean-up. Migrations are excluded: they are generated once, never edited, and read as a record
of the schema, not as code to maintain."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "adapters", "pipeline", "storage", "evaluation", "testing", "bench", "tests")
MIGRATIONS = REPO / "storage" / "migrations"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 79  # "under 80 lines"


def checked_modules() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if not path.is_relative_to(MIGRATIONS)
    ]


def long_modules(paths: list[Path], limit: int, root: Path = REPO) -> list[str]:
    """`path: N lines` for every module longer than `limit` lines, paths relative to `root`."""
    found = []
    for path in paths:
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            found.append(f"{path.relative_to(root)}: {count} lines")
    return found


def long_functions(paths: list[Path], limit: int, root: Path = REPO) -> list[str]:
    """`path:line name: N lines` for every function or method longer than `limit` lines,
    counted from its `def` line to its last line (decorators not counted)."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    where = f"{path.relative_to(root)}:{node.lineno}"
                    found.append(f"{where} {node.name}: {length} lines")
    return found


def test_the_checked_packages_are_found_and_migrations_left_out() -> None:
    paths = checked_modules()
    assert len(paths) > 50
    assert {path.relative_to(REPO).parts[0] for path in paths} == set(PACKAGES)
    assert (MIGRATIONS / "env.py").exists()
    assert not any(path.is_relative_to(MIGRATIONS) for path in paths)


def test_no_module_is_over_600_lines() -> None:
    offenders = long_modules(checked_modules(), MAX_MODULE_LINES)
    assert not offenders, "modules over 600 lines:\n" + "\n".join(offenders)


def test_no_function_reaches_80_lines() -> None:
    offenders = long_functions(checked_modules(), MAX_FUNCTION_LINES)
    assert not offenders, "functions of 80 lines or more:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    ("body_lines", "flagged"),
    [(MAX_FUNCTION_LINES - 1, False), (MAX_FUNCTION_LINES, True)],
)
def test_a_function_one_line_past_the_limit_is_named(
    tmp_path: Path, body_lines: int, flagged: bool
) -> None:
    # The def line plus `body_lines` statements: 79 lines pass, 80 are named.
    module = tmp_path / "module.py"
    module.write_text(
        "class Box:\n    def fill(self) -> None:\n"
        + "".join(f"        x{i} = {i}\n" for i in range(body_lines)),
        encoding="utf-8",
    )
    offenders = long_functions([module], MAX_FUNCTION_LINES, root=tmp_path)
    assert offenders == ([f"module.py:2 fill: {MAX_FUNCTION_LINES + 1} lines"] if flagged else [])


def test_a_module_one_line_past_the_limit_is_named(tmp_path: Path) -> None:
    module = tmp_path / "big.py"
    module.write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    within = tmp_path / "small.py"
    within.write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    offenders = long_modules([module, within], MAX_MODULE_LINES, root=tmp_path)
    assert offenders == ["big.py: 601 lines"]
