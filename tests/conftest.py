"""Property tests are derandomized: the same examples every run, so a CI run is never decided
by which inputs hypothesis happened to draw (a failure found while writing a test is kept as
an explicit example instead)."""

from hypothesis import settings

settings.register_profile("anemon", derandomize=True, database=None)
settings.load_profile("anemon")
