"""The built-in dashboard layouts (Textual CSS). This folder installs as `anemon.layouts`."""
