"""`pip install .` gives a working program: build the wheel, install it into a fresh venv, run it.

The built-in layouts live in the top-level `layouts/` folder and install as `anemon.layouts`; a
wheel without them fails every dashboard command with "no layout named 'default'". So: build the
wheel from a copy of the checkout (with this environment's setuptools, nothing downloaded), install
it with its dependencies (pinned by constraints.txt, as CI installs them) into a fresh venv, and
from an empty folder run the installed `anemon`: the headless demo, and a replay of a sample
recording in every built-in layout under tmux.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from anemon.ui.layouts import BUILTIN
from tests.library_internals import LIBRARIES

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "recordings" / "sim-sustain-1b-v2.jsonl"
ARM = "minicpm5_1b_ane_pal8"
TIMEOUT_S = 30.0

# What a checkout holds that a build does not need (and caches another process may be writing).
NOT_BUILT = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*cache*")


UNSET = ("PYTHONPATH", "VIRTUAL_ENV", "COLUMNS", "LINES")
"""The installed program must not see this checkout or this venv, nor a size fixed elsewhere."""


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def run(*args: str | Path, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=clean_env(), capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


def test_pyproject_lists_every_package() -> None:
    """The package list is explicit (for the `layouts/` mapping): a new subpackage must join it."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {
        ".".join(d.relative_to(REPO).parts)
        for d in (REPO / "anemon").rglob("*")
        if d.is_dir() and any(d.glob("*.py"))
    } | {"anemon"}
    assert set(config["packages"]) == on_disk | {"anemon.layouts"}
    assert config["package-dir"] == {"anemon.layouts": "layouts"}
    assert (REPO / "layouts" / "__init__.py").is_file()


def pins() -> dict[str, Version]:
    """constraints.txt's exact versions, by canonical name."""
    lines = (REPO / "constraints.txt").read_text().splitlines()
    pinned = (line.split("==") for line in lines if "==" in line and not line.startswith("#"))
    return {canonicalize_name(name): Version(version) for name, version in pinned}


def requirements() -> dict[str, Requirement]:
    """pyproject's `[project] dependencies`, by canonical name."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    found = map(Requirement, project["dependencies"])
    return {canonicalize_name(requirement.name): requirement for requirement in found}


def test_constraints_pin_every_dependency_inside_its_range() -> None:
    pinned = pins()
    wrong = [f"{name}: {pinned.get(name, 'not pinned')} for {requirement.specifier}"
             for name, requirement in requirements().items()
             if pinned.get(name) not in requirement.specifier]  # fmt: skip
    assert not wrong, wrong


def test_the_libraries_used_privately_are_declared_and_capped_at_the_next_minor() -> None:
    """Their adapters (tests/library_internals.py) were tested with the pinned version only:
    a user's install takes no release past its minor."""
    declared, pinned = requirements(), pins()
    for name in (canonicalize_name(library) for library in LIBRARIES):
        assert name in declared, f"{name} is used (privately) but not a declared dependency"
        caps = [Version(s.version) for s in declared[name].specifier if s.operator == "<"]
        pin = pinned[name]
        assert caps == [Version(f"{pin.major}.{pin.minor + 1}")], (name, declared[name])


# Everything below builds and installs the wheel: end-to-end, slow.


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel `pip install .` would install, built from a copy of the checkout."""
    work = tmp_path_factory.mktemp("build")
    source = work / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*NOT_BUILT))
    built = run(
        sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "--wheel-dir", work / "dist", source, cwd=work, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    [found] = (work / "dist").glob("anemon-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv with the wheel and its dependencies (at constraints.txt's versions)."""
    home = tmp_path_factory.mktemp("venv")
    created = run(sys.executable, "-m", "venv", "--without-pip", home / "v", cwd=home, timeout=60)
    assert created.returncode == 0, created.stderr
    # This environment's pip installs into the new venv: no second pip to bootstrap there.
    # No byte-compiling: most of the dependencies' modules never run here.
    installed = run(
        sys.executable, "-m", "pip", "--python", home / "v" / "bin" / "python", "install", "-q",
        "--no-compile", "-c", REPO / "constraints.txt", wheel, cwd=home, timeout=900,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    yield home / "v"
    shutil.rmtree(home, ignore_errors=True)  # some 400 MB, and pytest keeps three runs' folders


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


@pytest.mark.slow
def test_the_wheel_holds_the_code_and_its_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {f"anemon/layouts/{name}.tcss" for name in BUILTIN}
    wanted |= {f"anemon/layouts/{p.name}" for p in (REPO / "layouts").glob("*.tcss")}
    wanted |= {p.relative_to(REPO).as_posix() for p in (REPO / "anemon").rglob("*.py")}
    wanted |= {p.relative_to(REPO).as_posix() for p in (REPO / "anemon" / "data").iterdir()}
    wanted |= {p.relative_to(REPO).as_posix() for p in (REPO / "anemon" / "ui").glob("*.tcss")}
    assert wanted - names == set()
    assert not any(name.startswith(("layouts/", "tests/")) for name in names)


@pytest.mark.slow
def test_the_installed_program_runs_from_the_venv_not_the_checkout(venv: Path, empty: Path) -> None:
    probe = "import anemon.ui.layouts as m; print(m.__file__); print(m.LAYOUTS_DIR, *m.available())"
    done = run(venv / "bin" / "python", "-c", probe, cwd=empty, timeout=60)
    assert done.returncode == 0, done.stderr
    module, layouts = done.stdout.splitlines()
    site = next((venv / "lib").glob("python3*/site-packages")).resolve()
    assert Path(module).resolve().is_relative_to(site)
    directory, *names = layouts.split()
    assert Path(directory) == site / "anemon" / "layouts"
    assert names[: len(BUILTIN)] == list(BUILTIN)


@pytest.mark.slow
def test_the_installed_demo_runs_headless_from_an_empty_folder(venv: Path, empty: Path) -> None:
    done = run(venv / "bin" / "anemon", "demo", "--headless", "--speed", "max", cwd=empty,
               timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "phase done: 2 of 2 launches completed" in done.stdout
    summary = done.stdout.split("phase done: 2 of 2 launches completed", 1)[1]
    assert ARM in summary and "J/token" in summary  # the summary table, after the log
    assert "Traceback" not in done.stdout + done.stderr


# What tells the layouts apart on a 120x40 screen once the replay ended (see layouts/*.tcss).
LOOKS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # layout: (shown, not shown)
    "default": (("╭─ decode tok/s ─", "╭─ log"), ("decode tok/s · ",)),
    "compact": (("╭─ log",), ("╭─ decode tok/s", "╭─ prefill tok/s")),
    "wall": (("╭─ decode tok/s ─", "╭─ prefill tok/s"), ("╭─ log",)),
    "ab": ((f"decode tok/s · {ARM}", "╭─ log"), ("╭─ decode tok/s ─",)),
}


@pytest.fixture(scope="module")
def tmux(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., str]]:
    """A tmux server of our own: a shared one keeps the environment of whoever started it."""
    socket = str(tmp_path_factory.mktemp("tmux") / "socket")

    def command(*args: str, check: bool = True) -> str:
        done = subprocess.run(["tmux", "-S", socket, *args], capture_output=True, text=True,
                              check=check)  # fmt: skip
        return done.stdout

    yield command
    command("kill-server", check=False)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("layout", BUILTIN)
def test_the_installed_dashboard_replays_in_every_builtin_layout(
    venv: Path, empty: Path, tmux: Callable[..., str], layout: str
) -> None:
    assert set(LOOKS) == set(BUILTIN), "a new built-in layout: say what it looks like in LOOKS"
    shutil.copy(SAMPLE, empty / SAMPLE.name)
    status = empty.parent / "status"
    anemon = shlex.quote(str(venv / "bin" / "anemon"))
    unset = " ".join(f"-u {name}" for name in UNSET)
    command = (
        f"env {unset} {anemon} replay {SAMPLE.name} --speed max --layout {layout};"
        f" echo $? > {shlex.quote(str(status))}; sleep 60"
    )
    session = f"replay-{layout}"
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", "-c", str(empty), command)
    try:
        shown, hidden = LOOKS[layout]
        expected = ("phase done", "■ end", ARM, "Quit", *shown)
        deadline = time.monotonic() + TIMEOUT_S
        screen = ""
        while time.monotonic() < deadline:
            ended = status.exists()  # before the capture, so an error it printed is on screen
            screen = tmux("capture-pane", "-p", "-t", session)
            if ended or all(seen in screen for seen in expected):
                break
            time.sleep(0.2)
        assert all(seen in screen for seen in expected), f"{layout}: screen was\n{screen}"
        assert not any(seen in screen for seen in hidden), f"{layout}: screen was\n{screen}"
        tmux("send-keys", "-t", session, "q")
        deadline = time.monotonic() + TIMEOUT_S
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        after = tmux("capture-pane", "-p", "-t", session)
        assert status.read_text().strip() == "0", after
        assert "Traceback" not in after
    finally:
        tmux("kill-session", "-t", session, check=False)
