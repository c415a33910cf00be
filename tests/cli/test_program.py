"""How the program ends (`cli.program`, what `anemon` and `python -m anemon` run): with main's
status, what stdout still buffered written, the exit handlers the command registered run, and
the interpreter's teardown skipped. An exit handler registered before the program starts (as
coverage's is) runs only where Python's own exit comes: so it tells which one came."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

COMMAND = """
import atexit, sys
from pathlib import Path
import anemon.cli as cli

out = Path(sys.argv[1])
atexit.register((out / "early").write_text, "ran")  # before the program: runs after its own
TRACED

def command():
    atexit.register((out / "handler").write_text, "ran")
    sys.stdout.write("buffered, no newline")  # a pipe: block-buffered, not yet written
    return STATUS

cli.main = command
cli.program()
"""


def run(tmp_path: Path, status: str, traced: str = "") -> subprocess.CompletedProcess[str]:
    command = COMMAND.replace("STATUS", status).replace("TRACED", traced)
    return subprocess.run(
        [sys.executable, "-c", command, str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_program_ends_with_mains_status_its_output_and_its_exit_handlers(tmp_path):
    done = run(tmp_path, "3")
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered, no newline"
    assert (tmp_path / "handler").read_text() == "ran"
    assert not (tmp_path / "early").exists()  # Python's exit (0.3-0.8 s here) did not come


def test_a_status_of_zero_is_zero(tmp_path):
    done = run(tmp_path, "0")
    assert (done.returncode, done.stdout, done.stderr) == (0, "buffered, no newline", "")


def test_an_error_out_of_main_exits_as_python_does(tmp_path):
    done = run(tmp_path, "1 // 0")
    assert done.returncode == 1
    assert "ZeroDivisionError" in done.stderr
    assert (tmp_path / "early").read_text() == "ran"


def test_a_traced_program_exits_as_python_does(tmp_path):
    """coverage or a debugger: its exit handler, registered first, must still run."""
    done = run(tmp_path, "0", traced="sys.settrace(lambda *args: None)")
    assert (done.returncode, done.stdout) == (0, "buffered, no newline")
    assert (tmp_path / "handler").read_text() == "ran"
    assert (tmp_path / "early").read_text() == "ran"
