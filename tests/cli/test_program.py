"""How the program ends (`cli.program`, what `anemon` and `python -m anemon` run): with main's
status, what stdout still buffered written, the exit handlers the command registered run, and
the interpreter's teardown skipped."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

COMMAND = """
import atexit, sys
from pathlib import Path
import anemon.cli as cli

out = Path(sys.argv[1])

class TornDown:
    def __del__(self):  # run by the interpreter's teardown of this module, if it comes
        (out / "torn down").write_text("")

kept = TornDown()

def command():
    atexit.register((out / "handler").write_text, "ran")
    sys.stdout.write("buffered, no newline")  # a pipe: block-buffered, not yet written
    return STATUS

cli.main = command
cli.program()
"""


def run(tmp_path: Path, status: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", COMMAND.replace("STATUS", status), str(tmp_path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_the_program_ends_with_mains_status_its_output_and_its_exit_handlers(tmp_path):
    done = run(tmp_path, "3")
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered, no newline"
    assert (tmp_path / "handler").read_text() == "ran"
    assert not (tmp_path / "torn down").exists()  # the teardown (0.3-0.8 s here) did not come


def test_a_status_of_zero_is_zero(tmp_path):
    done = run(tmp_path, "0")
    assert (done.returncode, done.stdout, done.stderr) == (0, "buffered, no newline", "")


def test_an_error_out_of_main_exits_as_python_does(tmp_path):
    done = run(tmp_path, "1 // 0")
    assert done.returncode == 1
    assert "ZeroDivisionError" in done.stderr
    assert (tmp_path / "torn down").exists()  # Python's own exit, teardown and all
