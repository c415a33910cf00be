"""Install an app with pymobiledevice3 in a child process.

InstallationProxyService draws a progress bar on stderr and swaps sys.stdout/sys.stderr while
it runs; in a child process with piped output it cannot draw on anemon's terminal.
`python -m anemon.devices.pmd3.install --udid UDID APP` exits 0, or 1 with one line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from anemon.devices.base import DeviceError

TIMEOUT_S = 1800.0
"""A multi-GB bundle over USB takes minutes; past this something is stuck."""


async def install_in_subprocess(udid: str, app: Path, usbmux_address: str | None) -> None:
    argv = [sys.executable, "-m", "anemon.devices.pmd3.install", "--udid", udid, str(app)]
    if usbmux_address:
        argv += ["--usbmux", usbmux_address]
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(TIMEOUT_S):
            _, err = await proc.communicate()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise DeviceError(f"install of {app.name} did not finish in {TIMEOUT_S:.0f} s") from None
    if proc.returncode != 0:
        lines = [ln for ln in err.decode(errors="replace").splitlines() if ln.strip()]
        raise DeviceError(lines[-1] if lines else f"install of {app.name} failed")


async def _install(udid: str, app: Path, usbmux_address: str | None) -> None:
    from pymobiledevice3.exceptions import InvalidServiceError
    from pymobiledevice3.lockdown import create_using_usbmux
    from pymobiledevice3.services.installation_proxy import InstallationProxyService

    from anemon.devices.pmd3.errors import translate

    try:
        async with (
            await create_using_usbmux(
                serial=udid, autopair=False, usbmux_address=usbmux_address
            ) as lockdown,
            InstallationProxyService(lockdown) as proxy,
        ):
            await proxy.install_from_local(app, developer=False)
    except InvalidServiceError as e:
        raise DeviceError("the iPhone offers no installation service (installation_proxy)") from e
    except Exception as e:
        raise translate(e, address=usbmux_address, udid=udid) from e


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m anemon.devices.pmd3.install")
    parser.add_argument("--udid", required=True)
    parser.add_argument("--usbmux", default=None)
    parser.add_argument("app", type=Path)
    args = parser.parse_args(argv)
    if not args.app.exists():
        print(f"no such app: {args.app}", file=sys.stderr)
        return 1
    try:
        asyncio.run(_install(args.udid, args.app, args.usbmux))
    except DeviceError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
