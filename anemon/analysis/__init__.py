"""Tables for lab notes: the per-arm summary (numpy), its renderings, comparisons across
sessions, and the export of every trial (pandas, imported only there and for CSV)."""
