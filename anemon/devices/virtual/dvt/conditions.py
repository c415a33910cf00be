"""`com.apple.instruments.server.services.ConditionInducer`: conditions forced on the phone.

`availableConditionInducers` lists the groups and their profiles; `enableConditionWith
Identifier:profileIdentifier:` forces one (answered true), `disableActiveCondition` clears it.
One at a time on the whole phone: another while one is active is refused (code 3). A
ThermalCondition profile forces the thermal state the app reads (`ProcessInfo.thermalState`),
whatever the heat; the others are listed and held, with no effect on the simulation. A
condition ends when the DVT connection that set it closes, as on a real phone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anemon.devices.virtual.dvt.connection import (
    Channel,
    DtxConnection,
    Refused,
    arguments,
    unknown,
)
from anemon.devices.virtual.dvt.processcontrol import Processes
from anemon.devices.virtual.dvt.wire import NSError

IDENTIFIER = "com.apple.instruments.server.services.ConditionInducer"
DOMAIN = "com.apple.dt.ConditionInducer"
ALREADY_ACTIVE = 3
NOT_FOUND = 2
THERMAL = "ThermalCondition"


@dataclass(frozen=True)
class Profile:
    identifier: str
    name: str
    description: str


@dataclass(frozen=True)
class Group:
    identifier: str
    name: str
    profiles: tuple[Profile, ...]


GROUPS = (
    Group(THERMAL, "Thermal State", (
        Profile("ThermalFair", "Fair", "The device is slightly warm."),
        Profile("ThermalSerious", "Serious", "The device is hot; performance is reduced."),
        Profile("ThermalCritical", "Critical", "The device is too hot; performance is minimal."),
    )),
    Group("SlowNetworkCondition", "Network Link", (
        Profile("SlowNetwork3GGood", "3G, Good", "3G with good connectivity"),
        Profile("SlowNetworkEdgeBad", "Edge, Bad", "EDGE with poor connectivity"),
        Profile("SlowNetwork100PctLoss", "100% packet loss", "No connectivity"),
    )),
)  # fmt: skip
THERMAL_STATES = {"ThermalFair": 1, "ThermalSerious": 2, "ThermalCritical": 3}


class Conditions:
    """The phone's one active condition, and the connection that holds it. `changed` is told
    each change (a profile, or "" once cleared)."""

    def __init__(self, sim: Processes, changed: Callable[[str], None] | None = None) -> None:
        self.sim = sim
        self.changed = changed
        self.active: tuple[str, str] | None = None
        """(group, profile) of the active condition."""
        self._owner: DtxConnection | None = None

    @property
    def profile(self) -> str:
        """The active profile's identifier ("" when none is)."""
        return self.active[1] if self.active else ""

    def enable(self, group: str, profile: str, owner: DtxConnection) -> None:
        if self.active is not None:
            raise _refused(ALREADY_ACTIVE, "A condition is already active")
        found = next((g for g in GROUPS if g.identifier == group), None)
        if found is None or profile not in {p.identifier for p in found.profiles}:
            raise _refused(NOT_FOUND, f"No condition {group!r} with the profile {profile!r}")
        self.active, self._owner = (group, profile), owner
        owner.on_close(lambda: self.closed(owner))
        if group == THERMAL:
            self.sim.force_thermal(THERMAL_STATES[profile])
        self._tell(profile)

    def disable(self) -> None:
        if self.active is None:
            return
        if self.active[0] == THERMAL:
            self.sim.force_thermal(None)
        self.active = self._owner = None
        self._tell("")

    def closed(self, connection: DtxConnection) -> None:
        """A DVT connection ended: the condition it set ends with it."""
        if connection is self._owner:
            self.disable()

    def _tell(self, profile: str) -> None:
        if self.changed is not None:
            self.changed(profile)

    def listing(self) -> list[dict[str, Any]]:
        return [{"identifier": g.identifier, "name": g.name,
                 "isActive": self.active is not None and self.active[0] == g.identifier,
                 "activeProfile": self.profile if self.active and self.active[0] == g.identifier
                 else "",
                 "profiles": [{"identifier": p.identifier, "name": p.name,
                               "description": p.description} for p in g.profiles]}
                for g in GROUPS]  # fmt: skip


class ConditionInducer:
    def __init__(self, channel: Channel, conditions: Conditions) -> None:
        self.channel, self.conditions = channel, conditions

    async def call(self, selector: str, args: list[Any]) -> Any:
        if selector == "availableConditionInducers":
            return self.conditions.listing()
        if selector == "enableConditionWithIdentifier:profileIdentifier:":
            group, profile = arguments(args, str, str)
            self.conditions.enable(group, profile, self.channel.connection)
            return True
        if selector == "disableActiveCondition":
            self.conditions.disable()
            return None
        raise unknown(selector)

    def close(self) -> None:
        """The channel is closed; the condition stays until the connection ends."""


def _refused(code: int, description: str) -> Refused:
    return Refused(NSError(code, DOMAIN, {"NSLocalizedDescription": description}))
