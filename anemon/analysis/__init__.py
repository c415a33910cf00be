"""Tables for lab notes: the per-arm summary and the export of every trial (pandas)."""
