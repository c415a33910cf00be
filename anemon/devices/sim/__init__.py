"""The `sim` backend: the simulated iPhone (anemon/simulator) driven like a real one."""

from anemon.devices.sim.device import SimDevice, from_plan, host_reading, sim_config

__all__ = ["SimDevice", "from_plan", "host_reading", "sim_config"]
