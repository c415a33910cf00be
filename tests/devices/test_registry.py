"""The registry of backends (anemon/devices/__init__.py): one entry per kind, each building its
Device from a spec, and no backend imported until it is used."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from anemon.clock import RealClock
from anemon.control.plan import device_spec
from anemon.devices import BACKENDS, DEVICE_KINDS, REAL_KINDS, backend, reads_power
from anemon.devices.base import DeviceSpec
from anemon.devices.devicectl import DevicectlDevice
from anemon.devices.pmd3 import Pmd3Device
from anemon.devices.sim import SimDevice, SimDeviceSpec
from tests.control.helpers import TWO_ARMS, plan

BUILT = {"sim": SimDevice, "devicectl": DevicectlDevice, "pymobiledevice3": Pmd3Device}


def test_every_kind_builds_its_own_device_from_a_spec() -> None:
    assert DEVICE_KINDS == ("sim", "devicectl", "pymobiledevice3") == tuple(BUILT)
    assert REAL_KINDS == ("devicectl", "pymobiledevice3")
    for kind in DEVICE_KINDS:
        device = backend(kind).make(DeviceSpec(kind, "PHONE-1"), RealClock())
        assert isinstance(device, BUILT[kind]) and device.kind == kind


def test_a_plan_gives_the_simulator_its_setup_and_the_others_their_device_table() -> None:
    device_table = '[device]\nid = "SIM-2"\npoll_s = 0.5'
    sim_plan = plan(TWO_ARMS, device=device_table, sim="[sim]\nfree_gb = 9")
    spec = device_spec(sim_plan)
    assert isinstance(spec, SimDeviceSpec)
    assert (spec.id, spec.poll_s, spec.bundle) == ("SIM-2", 0.5, sim_plan.app.bundle)
    assert spec.config.free_gb == 9 and set(spec.config.arms) == {a.name for a in sim_plan.arms}
    device = backend("sim").make(spec, RealClock())
    assert isinstance(device, SimDevice) and device.udid == "SIM-2"
    assert device.phone.config == spec.config
    real = dataclasses.replace(sim_plan, device=DeviceSpec("devicectl"))
    assert device_spec(real) is real.device


def test_power_is_read_by_the_simulator_and_pymobiledevice3_only() -> None:
    assert {kind for kind, b in BACKENDS.items() if b.reads_power} == {"sim", "pymobiledevice3"}
    assert [reads_power(k) for k in (None, "devicectl", "pymobiledevice3", "foo")] == [
        None, False, True, False,
    ]  # fmt: skip


def test_an_unknown_kind_is_no_backend() -> None:
    with pytest.raises(ValueError, match="not a device backend: 'foo'"):
        backend("foo")


def test_the_registry_imports_no_backend() -> None:
    code = (
        "import sys\nimport anemon.devices as d\n"
        "d.backend('sim'), d.reads_power('pymobiledevice3'), d.DEVICE_KINDS\n"
        "print(sorted(m for m in sys.modules if m.startswith(("
        "'anemon.devices.', 'pymobiledevice3', 'anemon.simulator'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['anemon.devices.base']"
