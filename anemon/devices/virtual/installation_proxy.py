"""installation_proxy (`com.apple.mobile.installation_proxy`): what the phone says of its apps.

Length-prefixed plists, several commands on one connection, as pymobiledevice3 11.45's
`InstallationProxyService` sends and reads them:
- `{Command: Lookup, ClientOptions: {BundleIDs?, ApplicationType?, ReturnAttributes?}}` is
  answered in one reply, `{LookupResult: {bundle id: {attribute: value}}, Status: Complete}`;
  a bundle id the phone does not have is left out (an empty LookupResult), as a real phone does;
- `{Command: Browse, ClientOptions}` streams `{Status: BrowsingApplications, CurrentList: [...],
  CurrentIndex, CurrentAmount, Total}`, then `{Status: Complete}`;
- any other command is answered `{Error: UnknownCommand, ErrorDescription}`, and an option of
  the wrong type `{Error: InvalidArgument, ErrorDescription}`; the connection goes on.
Each app of the phone is a development-signed user app whose executable is the phone's bench
process (`os_trace.bench_process`, the name its console lines and its jetsam reports carry).
"""

from __future__ import annotations

import asyncio
import posixpath
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from anemon.devices.virtual.os_trace import bench_process
from anemon.devices.virtual.plist_io import BadRequest, field, prefixed_packet, read_prefixed

SERVICE_NAME = "com.apple.mobile.installation_proxy"
USER = "User"
APPLICATION_TYPES = ("Any", USER)
"""The types whose lookup lists the bench apps (the phone's system apps are not modelled)."""


def app_info(bundle: str, executable: str) -> dict[str, Any]:
    """What a phone answers of a development-signed app (a subset of a real reply's keys)."""
    app_path = posixpath.dirname(bench_process(executable).path)
    data = str(uuid.uuid5(uuid.NAMESPACE_URL, f"anemon-virtual-data:{bundle}")).upper()
    return {
        "CFBundleIdentifier": bundle,
        "CFBundleExecutable": executable,
        "CFBundleName": executable,
        "CFBundleDisplayName": executable,
        "CFBundleVersion": "1",
        "CFBundleShortVersionString": "1.0",
        "CFBundlePackageType": "APPL",
        "ApplicationType": USER,
        "Path": app_path,
        "Container": f"/private/var/mobile/Containers/Data/Application/{data}",
        "SignerIdentity": "Apple Development: Virtual Developer (VIRTUAL001)",
        "ProfileValidated": True,
        "UIFileSharingEnabled": True,
        "MinimumOSVersion": "16.0",
        "DTPlatformName": "iphoneos",
    }


class InstallationProxy:
    """The service for the apps `bundles`, each running as `executable`."""

    def __init__(self, bundles: Iterable[str], executable: str) -> None:
        self.apps = {bundle: app_info(bundle, executable) for bundle in sorted(bundles)}

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = await read_prefixed(reader)
            try:
                replies = self.answer(request)
            except BadRequest as e:
                replies = [{"Error": "InvalidArgument", "ErrorDescription": str(e)}]
            for reply in replies:
                writer.write(prefixed_packet(reply))
            await writer.drain()

    def answer(self, request: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The replies to one command, in order. Raises BadRequest for an option's type."""
        command = request.get("Command")
        options = field(request, "ClientOptions", dict, {})
        if command == "Lookup":
            found = self._apps(options)
            return [{"LookupResult": dict(found), "Status": "Complete"}]
        if command == "Browse":
            listed = list(self._apps(options).values())
            page = {"CurrentIndex": 0, "CurrentAmount": len(listed), "Total": len(listed),
                    "CurrentList": listed, "Status": "BrowsingApplications"}  # fmt: skip
            return [page, {"Status": "Complete"}] if listed else [{"Status": "Complete"}]
        return [{"Error": "UnknownCommand",
                 "ErrorDescription": f"Unknown command {str(command)[:80]!r}"}]  # fmt: skip

    def _apps(self, options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """The apps the options select, each with the attributes they ask for (all: none asked)."""
        wanted = _strings(options, "BundleIDs")
        kind = field(options, "ApplicationType", str, "Any")
        attributes = _strings(options, "ReturnAttributes")
        if kind not in APPLICATION_TYPES:
            return {}
        return {
            bundle: {k: v for k, v in info.items() if attributes is None or k in attributes}
            for bundle, info in self.apps.items()
            if wanted is None or bundle in wanted
        }


def _strings(options: Mapping[str, Any], key: str) -> list[str] | None:
    """`options[key]`, a list of strings (None: not given). Raises BadRequest."""
    values = field(options, key, list, None)
    if values is not None and not all(isinstance(v, str) for v in values):
        raise BadRequest(f"{key} holds a value that is not a string")
    return values
