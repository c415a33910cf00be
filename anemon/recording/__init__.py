"""Recordings: JSON Lines, a header then one event per line (docs/spec/cli.md "Recordings")."""
