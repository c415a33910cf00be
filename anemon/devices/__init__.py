"""Devices: one interface (base.py), one subpackage per backend, each holding its connection
in one object: sim/ (the simulated phone), devicectl/ (`Devicectl`), pmd3/ (`Pmd3Connection`);
pulled.py is the follow sim and devicectl share, reports.py the crash reports pmd3 and sim
read; virtual/ is the virtual iPhone for pmd3.

This module is the registry of backends: `BACKENDS`, kind → `Backend` (its factory, its
lister, what it reads, which connections it takes). Every command and the plan reader ask it;
a backend's package is imported only when that backend is used (pymobiledevice3 is slow to
import: `anemon --help` must not pay for it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from anemon.devices.base import CONNECTIONS, Device, DeviceReport, DeviceSpec
from anemon.errors import AnemonError

if TYPE_CHECKING:
    from anemon.clock import Clock


class BackendModule(Protocol):
    """What a backend's package offers the registry."""

    def make_device(self, spec: DeviceSpec, clock: Clock) -> Device:
        """The Device `spec` describes, on the session's clock."""
        ...

    async def list_attached(self) -> list[DeviceReport]:
        """`anemon devices`: what is attached and what the host reads of each."""
        ...


@dataclass(frozen=True, slots=True)
class Backend:
    kind: str
    """What a plan's `device.kind` and `--device` call it."""
    load: Callable[[], BackendModule]
    """Imports the backend's package (only when the backend is used)."""
    reads_power: bool
    """Reads device power (battery current x voltage) every `power_s`; devicectl cannot."""
    connections: tuple[str, ...]
    """The CONNECTIONS it can be told to use (devicectl finds networked phones itself)."""
    real: bool = True
    """Drives a phone on the desk (`watch --device`); the simulator is built from a plan."""

    def make(self, spec: DeviceSpec, clock: Clock) -> Device:
        """The Device; AnemonError (a usage error) when `spec` cannot describe one."""
        if spec.connect not in CONNECTIONS:
            raise AnemonError(f"connect is usb or network, not {spec.connect!r}")
        return self.load().make_device(spec, clock)

    async def list_attached(self) -> list[DeviceReport]:
        return await self.load().list_attached()


def _sim() -> BackendModule:
    from anemon.devices import sim

    return sim


def _devicectl() -> BackendModule:
    from anemon.devices import devicectl

    return devicectl


def _pmd3() -> BackendModule:
    from anemon.devices import pmd3

    return pmd3


BACKENDS: Mapping[str, Backend] = MappingProxyType({backend.kind: backend for backend in (
    Backend("sim", _sim, reads_power=True, connections=CONNECTIONS, real=False),
    Backend("devicectl", _devicectl, reads_power=False, connections=("usb",)),
    Backend("pymobiledevice3", _pmd3, reads_power=True, connections=CONNECTIONS),
)})  # fmt: skip
DEVICE_KINDS = tuple(BACKENDS)
"""Every backend, as plans and `run --device` name them."""
REAL_KINDS = tuple(kind for kind, backend in BACKENDS.items() if backend.real)
"""Backends that drive a phone on the desk (the simulator is built from a plan instead)."""


def backend(kind: str) -> Backend:
    """The backend of this kind; ValueError if there is none (kinds are checked before)."""
    try:
        return BACKENDS[kind]
    except KeyError:
        raise ValueError(f"not a device backend: {kind!r}") from None


def reads_power(kind: str | None) -> bool | None:
    """Whether a backend of this kind reads device power; None: no backend (a mirrored log).
    A kind no backend has (a recording's, say) reads none."""
    if kind is None:
        return None
    return kind in BACKENDS and BACKENDS[kind].reads_power
