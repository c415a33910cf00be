"""The export action's file: the summary as a Markdown lab-note table (no Textual here)."""

from __future__ import annotations

from pathlib import Path

from anemon.analysis.render import markdown, title
from anemon.analysis.summary import summarize
from anemon.paths import create_new
from anemon.store import Session


def export_summary(
    session: Session, directory: Path, source: str, device: str | None
) -> tuple[str, Path]:
    """Write the summary table, under its title (`source`: the feed's title; `device`: the
    run's), to a new file in `directory`; returns the text and the path."""
    text = f"### {title(source, session, device)}\n\n" + markdown(list(summarize(session)))
    path, file = create_new(directory / "anemon-summary.md")  # never over an earlier export
    with file:
        file.write(text)
    return text, path
