"""Devices: one interface (base.py), one module per backend (sim, devicectl, pymobiledevice3)."""
