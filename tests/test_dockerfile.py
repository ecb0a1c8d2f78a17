"""The Dockerfile, read as Docker reads it (no daemon here): dependencies in a layer of their
own before the source, the demo shipped, the port exposed, a health check that exists, and
ENV settings the application really reads."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from bot.commands.demo import demo_paths
from bot.config import load_settings

REPO = Path(__file__).resolve().parents[1]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    joined = re.sub(r"\\\n\s*", " ", text)
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def index_of(predicate: object, items: list[tuple[str, str]]) -> int:
    return next(i for i, item in enumerate(items) if predicate(item))  # type: ignore[operator]


def test_dependencies_are_installed_before_the_source_is_copied() -> None:
    steps = instructions()
    copy_pyproject = index_of(lambda s: s[0] == "COPY" and "pyproject.toml" in s[1], steps)
    install_deps = index_of(lambda s: s[0] == "RUN" and "-r /tmp/requirements.txt" in s[1], steps)
    first_source = index_of(
        lambda s: s[0] == "COPY" and s[1].split()[0] in {"bot", "pipeline", "adapters", "storage"},
        steps,
    )
    install_source = index_of(lambda s: s[0] == "RUN" and "--no-deps ." in s[1], steps)
    assert copy_pyproject < install_deps < first_source < install_source
    # The dependency layer sees nothing but the dependency list and its pins.
    copied_before = [s for s in steps[:install_deps] if s[0] == "COPY"]
    assert [s[1] for s in copied_before] == ["pyproject.toml constraints.txt ./"]
    # torch is the CPU build, pinned, from PyTorch's CPU index unless a build names another.
    torch = index_of(lambda s: s[0] == "RUN" and "torch==2.13.0" in s[1], steps)
    assert torch < install_deps
    assert '--index-url "$TORCH_INDEX_URL"' in steps[torch][1]
    assert ("ARG", "TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu") in steps[:torch]
    # The dependency install is held to constraints.txt, which pins that same torch.
    assert "-c constraints.txt" in steps[install_deps][1]
    pins = (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines()
    assert "torch==2.13.0" in pins


def test_the_dependency_list_it_reads_is_the_project_s() -> None:
    install = next(a for i, a in instructions() if i == "RUN" and "tomllib" in a)
    assert "['project']['dependencies']" in install
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(dep.startswith("torch") for dep in project["dependencies"])


def test_the_port_is_exposed_and_the_health_check_runs_a_real_module() -> None:
    steps = dict(instructions())
    assert steps["EXPOSE"] == "8000"
    health = steps["HEALTHCHECK"]
    assert "--start-period=" in health
    command = health.split("CMD", 1)[1].strip()
    args = json.loads(command)  # the exec form is a JSON array (Dockerfile reference)
    assert args == ["python", "-m", "bot.ops.healthcheck"]
    assert (REPO / "bot" / "ops" / "healthcheck.py").is_file()
    assert "/healthz" in (REPO / "bot" / "web" / "routes" / "ops.py").read_text(encoding="utf-8")


def test_the_default_command_is_the_bot_and_the_demo_ships_in_the_image() -> None:
    steps = instructions()
    assert ("ENTRYPOINT", '["factnote"]') in steps and ("CMD", '["run"]') in steps
    assert ("COPY", "examples ./examples") in steps
    env = " ".join(a for i, a in steps if i == "ENV")
    assert "FACTNOTE_EXAMPLES=/app/examples" in env
    ignored = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for path in ("examples/demo.toml", "examples/inbox/1001.json", "pyproject.toml", "README.md"):
        assert not any(fnmatch.fnmatch(path, p) for p in ignored), path
    for path in (".venv", ".git", "data", "tests", ".env"):
        assert any(fnmatch.fnmatch(path, p) for p in ignored), path


def image_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The Dockerfile's ENV as this process's environment, its /app paths mapped here."""
    for name in list(os.environ):
        if name.startswith(("FACTNOTE_", "OPENAI_")):
            monkeypatch.delenv(name)
    values: dict[str, str] = {}
    for instruction, args in instructions():
        if instruction == "ENV":
            values.update(dict(part.split("=", 1) for part in shlex.split(args)))
    for name, value in values.items():
        monkeypatch.setenv(name, value.replace("/app/", f"{REPO}/"))
    return values


def test_the_image_keeps_everything_in_the_data_volume(monkeypatch: pytest.MonkeyPatch) -> None:
    assert image_env(monkeypatch)["FACTNOTE_CONFIG"] == "/app/examples/docker.toml"
    settings = load_settings()
    assert settings.database_url == "sqlite:////data/factnote.db"
    kept = [
        settings.index_path,
        settings.claims.path,
        settings.authority.path,
        settings.local.inbox,
        settings.local.outbox,
        settings.bluesky.session_path,
    ]
    assert all(path.startswith("/data/") for path in kept), kept


def test_in_the_image_the_demo_config_still_sees_the_demo_s_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No path comes from a variable (which would win over every file): `--config demo.toml`
    # after `factnote demo` must read where the demo wrote.
    image_env(monkeypatch)
    settings = load_settings(REPO / "examples" / "demo.toml")
    assert settings.database_url == demo_paths()["database_url"]
    assert settings.claims.path == demo_paths()["claims.path"]
    assert settings.index_path == demo_paths()["index_path"]


def test_every_data_file_of_the_packages_is_installed_by_pip() -> None:
    """The image installs the packages with `pip install .`, which copies a file that is not
    Python only when a package-data pattern names it: a table the polarity check reads
    (`*.tsv`) or the review app's icon (`*.svg`) would be missing there, and nowhere else."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["*"]
    packages = ("adapters", "bot", "pipeline", "storage", "evaluation")
    data = [
        path
        for package in packages
        for path in (REPO / package).rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts
    ]
    assert data, "no data files found: the package folders moved?"
    missing = [
        str(path.relative_to(REPO))
        for path in data
        if not any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns)
    ]
    assert missing == []
