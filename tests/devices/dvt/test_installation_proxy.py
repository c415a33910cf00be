"""The virtual iPhone's installation_proxy with the real pymobiledevice3 client, on both routes
(lockdown on iOS 16, the RSD's `.shim.remote` on iOS 17): Lookup and Browse answer for the
bench app as a phone does, an unknown bundle gets nothing, an unknown command an error and the
connection goes on; and the backend learns the app's executable from it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.devices.dvt.helpers import DvtPhone
from tests.devices.helpers import BUNDLE, TIMEOUT_S

SERVICES = {"lockdown": "com.apple.mobile.installation_proxy",
            "rsd": "com.apple.mobile.installation_proxy.shim.remote"}  # fmt: skip


async def proxy_of(phone: DvtPhone) -> Any:
    from pymobiledevice3.services.installation_proxy import InstallationProxyService

    provider = await phone.device().connection.developer_provider()
    return InstallationProxyService(lockdown=provider)


async def test_lookup_answers_for_the_bench_app(dvt_phone: DvtPhone) -> None:
    async with asyncio.timeout(TIMEOUT_S), await proxy_of(dvt_phone) as proxy:
        apps = await proxy.get_apps(bundle_identifiers=[BUNDLE])
    app = apps[BUNDLE]
    assert (app["CFBundleIdentifier"], app["CFBundleExecutable"]) == (BUNDLE, "BenchApp")
    assert app["CFBundleVersion"] == "1" and app["ApplicationType"] == "User"
    assert app["Path"].startswith("/private/var/containers/Bundle/Application/")
    assert app["Path"].endswith("/BenchApp.app")
    assert app["Container"].startswith("/private/var/mobile/Containers/Data/Application/")
    assert dvt_phone.virtual.service_starts[SERVICES[dvt_phone.route]] == 1


async def test_lookup_gives_the_attributes_asked_and_nothing_for_an_unknown_bundle(
    dvt_phone: DvtPhone,
) -> None:
    asked = {"BundleIDs": [BUNDLE, "com.example.absent"],
             "ReturnAttributes": ["CFBundleIdentifier", "CFBundleExecutable"]}  # fmt: skip
    async with asyncio.timeout(TIMEOUT_S), await proxy_of(dvt_phone) as proxy:
        found = await proxy.lookup(asked)
        assert await proxy.get_apps(bundle_identifiers=["com.example.absent"]) == {}
        assert await proxy.get_apps(application_type="System") == {}
    assert found == {BUNDLE: {"CFBundleIdentifier": BUNDLE, "CFBundleExecutable": "BenchApp"}}


async def test_browse_streams_the_apps_then_complete(dvt_phone: DvtPhone) -> None:
    async with asyncio.timeout(TIMEOUT_S), await proxy_of(dvt_phone) as proxy:
        listed = await proxy.browse(attributes=["CFBundleIdentifier", "CFBundleExecutable"])
    assert listed == [{"CFBundleIdentifier": BUNDLE, "CFBundleExecutable": "BenchApp"}]


async def test_an_unknown_command_or_a_bad_option_is_an_error_and_the_connection_goes_on(
    dvt_phone: DvtPhone,
) -> None:
    from pymobiledevice3.exceptions import AppInstallError

    async with asyncio.timeout(TIMEOUT_S), await proxy_of(dvt_phone) as proxy:
        with pytest.raises(AppInstallError, match="UnknownCommand"):
            await proxy.send_cmd_for_bundle_identifier(BUNDLE, "Archive")
        assert (await proxy.lookup({"BundleIDs": "not a list"})) is None  # InvalidArgument
        assert BUNDLE in await proxy.get_apps(bundle_identifiers=[BUNDLE])


async def test_the_backend_learns_the_apps_executable_once(dvt_phone: DvtPhone) -> None:
    device = dvt_phone.device()
    async with asyncio.timeout(TIMEOUT_S):
        assert await device.executables.name(BUNDLE) == "BenchApp"
        assert await device.executables.name(BUNDLE) == "BenchApp"
        assert await device.executables.name("com.example.absent") == ""
    assert dvt_phone.virtual.service_starts[SERVICES[dvt_phone.route]] == 2
