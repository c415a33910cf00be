"""The export action's file: the summary as a Markdown lab-note table (no Textual here)."""

from __future__ import annotations

from pathlib import Path

from anemon.analysis.render import markdown
from anemon.analysis.summary import summarize
from anemon.store import Session


def free_path(directory: Path, stem: str, suffix: str) -> Path:
    """`stem.suffix`, or `stem-2.suffix`, ...: never overwrite an earlier export."""
    path = directory / f"{stem}{suffix}"
    n = 1
    while path.exists():
        n += 1
        path = directory / f"{stem}-{n}{suffix}"
    return path


def export_summary(session: Session, directory: Path) -> tuple[str, Path]:
    """Write the summary table to a new file in `directory`; returns the text and the path."""
    text = markdown(list(summarize(session)))
    path = free_path(directory, "anemon-summary", ".md")
    path.write_text(text, encoding="utf-8")
    return text, path
