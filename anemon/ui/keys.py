"""Every operator action once: its key (Footer), its palette entry, and what it needs.

`needs` is "replay" (a replay to drive: `feed.replay`), "controls" (a running plan's operator
actions: `feed.controls`), "overlay" (a reference session: `replay --overlay`) or "" (always
available). A `confirm` action's keys pass themselves
to it (`quit('q')`): during a run it waits for the same key again (see `confirm.Confirm`); the
palette calls it without a key, at once. `show`: in the footer (the rest only in the keys help
and the palette: a run's footer keeps room for its keys, q, ?, a, X, k and p, at 80 columns).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True, slots=True)
class Action:
    keys: str
    action: str
    """The action string (Textual syntax, parameters included)."""
    title: str
    help: str
    needs: str = ""
    show: bool = True
    confirm: bool = False

    @property
    def name(self) -> str:
        return self.action.split("(")[0]


ACTIONS = (
    Action("q", "quit", "Quit", "Leave (a live watch closes its recording)", confirm=True),
    Action("question_mark", "keys_help", "Keys", "Show the keys and what they do"),
    Action("space", "toggle_pause", "Pause", "Pause or resume the replay", "replay"),
    Action("plus", "faster", "Faster", "Replay faster", "replay"),
    Action("minus", "slower", "Slower", "Replay slower", "replay"),
    Action("left", "seek_by(-10)", "−10s", "Seek back 10 seconds", "replay"),
    Action("right", "seek_by(10)", "+10s", "Seek forward 10 seconds", "replay"),
    Action("shift+left,comma", "seek_by(-60)", "−1m", "Seek back 1 minute", "replay", False),
    Action("shift+right,full_stop", "seek_by(60)", "+1m", "Seek forward 1 minute", "replay", False),
    Action("home", "seek_start", "Start", "Seek to the start", "replay", False),
    Action("end", "seek_end", "End", "Seek to the end", "replay", False),
    Action("o", "toggle_overlay", "Overlay", "Show or hide the reference curves", "overlay"),
    Action("m", "marker", "Marker", "Add an operator note to the session", show=False),
    Action("l", "next_layout", "Layout", "Switch to the next layout", show=False),
    Action("e", "export", "Export", "Summary as Markdown to the clipboard and a file", show=False),
    Action("s", "screenshot", "Screenshot", "Save the screen as SVG", show=False),
    Action("a", "abort_arm", "Abort arm", "Stop the current arm", "controls"),
    Action("X", "abort_session", "Abort all", "Stop the whole session", "controls", confirm=True),
    Action(
        "k",
        "skip_cooldown",
        "Skip wait",
        "End the cooldown now, or go on from an unplug/replug wait",
        "controls",
    ),
    Action(
        "w",
        "extend_cooldown(60)",
        "+1m cool",
        "Extend the cooldown by 60 s",
        "controls",
        show=False,
    ),
    Action("p", "toggle_queue", "Hold queue", "Pause or resume the queue of arms", "controls"),
)

QUIT_KEYS = ("ctrl+c", "ctrl+q")
"""Quit too, like `q` (Textual's ctrl+c only hints at ctrl+q; ctrl+q would skip the question)."""
NO_OVERLAY = "no_overlay"
"""`o` in a replay without `--overlay`: says why nothing is shown (not in the footer, the
help or the palette; `toggle_overlay` answers `o` when there is a reference)."""


def help_keys(a: Action) -> list[str]:
    """The keys the keys help gives for `a` (quitting: ctrl+c and ctrl+q too)."""
    return a.keys.split(",") + (list(QUIT_KEYS) if a.name == "quit" else [])


def binding(a: Action) -> Binding:
    action = f"{a.action}({a.keys!r})" if a.confirm else a.action
    return Binding(a.keys, action, a.title, show=a.show)


NEEDS = {a.name: a.needs for a in ACTIONS} | {NO_OVERLAY: "no overlay"}
"""Each action's need (above); `no_overlay`'s: a replay without a reference."""
BINDINGS: list[BindingType] = [binding(a) for a in ACTIONS]
BINDINGS += [Binding(k, f"quit({k!r})", show=False, priority=k == "ctrl+q") for k in QUIT_KEYS]
BINDINGS += [Binding("o", NO_OVERLAY, show=False)]
