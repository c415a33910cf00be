"""Dashboards on fixed data with a fixed clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from anemon.feeds import Feed
from anemon.feeds.runs import Runs
from anemon.ui import layouts
from anemon.ui.app import Dashboard

from .helpers import MakeApp
from .sample import replay_feed


@pytest.fixture
def make_app(tmp_path: Path) -> MakeApp:
    """`make_app(layout="default", feed=None)`: a Dashboard saving exports (and the sample
    replay's markers) under tmp_path."""

    def make(layout: str = "default", feed: Feed | None = None) -> Dashboard:
        feed = feed or replay_feed(markers_dir=tmp_path)
        return Dashboard(Runs.one(feed), layouts.resolve(layout), save_dir=tmp_path)

    return make
