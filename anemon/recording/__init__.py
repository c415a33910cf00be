"""Recordings: JSON Lines, a header then one event per line (spec/cli.md "Recordings")."""
