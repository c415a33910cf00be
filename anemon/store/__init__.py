"""The session store: everything seen so far, columnar per arm, fit for tables and charts."""

from anemon.store.session import ArmSeries, Series, Session

__all__ = ["ArmSeries", "Series", "Session"]
