"""`python -m anemon.devices.virtual`: a virtual iPhone for people without one.

Runs the simulated phone with the bench app launched on one arm, in real time (or faster with
--speed), and prints the `USBMUXD_SOCKET_ADDRESS` to export so that anemon's pymobiledevice3
backend (or the pymobiledevice3 command line) talks to it, the address its lockdownd answers
on over the network (`--connect network --host 127.0.0.1:PORT`) and the app's console process
(`--console PROCESS`, instead of `--bundle`/`--log`). With `--count N` or several `--udid`,
N phones with distinct UDIDs are listed by one usbmuxd (one export for all of them: each
plan's `device.id` picks its phone). Each phone is an iOS 16 phone with the developer disk
image mounted (`--ios` for another version): DVT's process control launches and kills the
simulated bench app, so `anemon run PLAN --device pymobiledevice3` drives it; a condition
forced or cleared through DVT (ConditionInducer) is said on stderr. With `--ios 17` or later a
phone offers DVT only over RSD, as a real one does: each phone's RSD listens on loopback, a
stand-in tunneld lists them, and it prints the `ANEMON_TUNNELD_ADDRESS` to export beside the
usbmuxd one. Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import math
import sys
import time
from collections.abc import Sequence

from anemon.devices.virtual.dvt import SERVICE_NAME as DVT
from anemon.devices.virtual.lockdownd import NetworkLockdownd
from anemon.devices.virtual.phone import DEFAULT_UDID, VirtualIPhone
from anemon.devices.virtual.rsd import VirtualRsd
from anemon.devices.virtual.server import LoopbackServer
from anemon.devices.virtual.ticker import advance
from anemon.devices.virtual.tunneld import VirtualTunneld
from anemon.devices.virtual.usbmuxd import VirtualUsbmuxd

DEFAULT_BUNDLE = "com.example.bench"
DEFAULT_ARM = "minicpm5_1b_ane_pal8"
DEFAULT_IOS = "16.7.10"
"""Before 17: DVT is a lockdown service (from 17 on it needs a tunnel)."""
MAX_COUNT = 64
EXIT_USAGE = 2
"""argparse's exit status for bad options (a count out of range, a UDID given twice)."""
RSD_FROM = 17
"""The iOS major version from which DVT is reached only through RSD."""
TUNNELD_ADDRESS = "ANEMON_TUNNELD_ADDRESS"
"""What anemon's pymobiledevice3 backend reads to find a tunneld (pmd3/dvt.py's seam)."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m anemon.devices.virtual", description=__doc__)
    parser.add_argument("--bundle", default=DEFAULT_BUNDLE, help="the bench app's bundle id")
    parser.add_argument("--arm", default=DEFAULT_ARM, help="AB_MODEL of the launch")
    parser.add_argument("--speed", type=float, default=1.0, help="simulated seconds per second")
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    parser.add_argument(
        "--count",
        type=int,
        default=0,
        metavar="N",
        help=f"serve N phones (UDIDs ...0001 to ...N; 1 to {MAX_COUNT})",
    )
    parser.add_argument("--system-load", type=float, default=0, metavar="S",
                        help="publish the phone's system load (PowerTelemetryData), refreshed "
                             "every S simulated seconds (0: not published)")  # fmt: skip
    parser.add_argument("--udid", action="append", default=[], metavar="UDID",
                        help="serve a phone with this UDID (repeat: several)")  # fmt: skip
    parser.add_argument("--ios", type=ios_version, default=DEFAULT_IOS, metavar="VERSION",
                        help=f"the iOS version the phones report (default {DEFAULT_IOS}); "
                             f"{RSD_FROM} or later: DVT over RSD, listed by a stand-in "
                             "tunneld")  # fmt: skip
    parser.add_argument("--tunneld-port", type=int, default=0, metavar="PORT",
                        help="the stand-in tunneld's loopback port (default: a free one; 49151 "
                             "is where pymobiledevice3 looks without the export)")  # fmt: skip
    args = parser.parse_args(argv)
    if not 0 <= args.system_load < math.inf:
        parser.error(f"--system-load {args.system_load}: give seconds, 0 for none")
    try:
        args.udids = udids(args.count, args.udid)
    except ValueError as e:
        parser.error(str(e))  # one line on stderr, exit 2
    return args


def ios_version(text: str) -> str:
    """`text` if it reads as an iOS version ("17", "17.5.1"); else what to give instead."""
    if not all(part.isdigit() for part in text.split(".")):
        raise argparse.ArgumentTypeError(f"{text!r}: give an iOS version such as 16.7 or 17.5.1")
    return text


def over_rsd(phone: VirtualIPhone) -> bool:
    """Whether the phone's iOS reaches DVT only through RSD."""
    return int(phone.product_version.split(".")[0]) >= RSD_FROM


def udids(count: int, given: Sequence[str]) -> list[str]:
    """The UDIDs to serve: `given`, else `count` numbered from DEFAULT_UDID (one by default).
    ValueError (what to change) for both at once, a count out of range or a repeated UDID."""
    if given and count:
        raise ValueError("give --count or --udid, not both")
    if given:
        if len({u.casefold() for u in given}) != len(given):
            raise ValueError(f"--udid given twice: {', '.join(given)}; each phone needs its own")
        return list(given)
    if not 0 <= count <= MAX_COUNT:
        raise ValueError(f"--count {count}: give 1 to {MAX_COUNT}")
    stem = DEFAULT_UDID[:-4]
    return [f"{stem}{number:04d}" for number in range(1, max(count, 1) + 1)]


async def serve(args: argparse.Namespace) -> None:
    from anemon.simulator import SimConfig, SimulatedIPhone

    sims: list[SimulatedIPhone] = []
    phones: list[VirtualIPhone] = []
    for number, udid in enumerate(args.udids, start=1):
        sim = SimulatedIPhone(SimConfig(seed=number - 1, epoch_s=time.time()))  # reports' dates
        sim.launch(args.bundle, {"AB_MODEL": args.arm})
        name = "Virtual iPhone" if number == 1 else f"Virtual iPhone {number}"
        sims.append(sim)
        phones.append(VirtualIPhone(sim, bundles=[args.bundle], udid=udid, name=name,
                                    product_version=args.ios, developer_image=True,
                                    system_load_s=args.system_load or None))  # fmt: skip
    usbmuxd: LoopbackServer = phones[0] if len(phones) == 1 else VirtualUsbmuxd(phones)
    async with usbmuxd, contextlib.AsyncExitStack() as stack:
        networks = [await stack.enter_async_context(NetworkLockdownd(p)) for p in phones]
        print(f"export USBMUXD_SOCKET_ADDRESS={usbmuxd.address}", flush=True)
        rsds = {p.udid: await stack.enter_async_context(VirtualRsd(p))
                for p in phones if over_rsd(p)}  # fmt: skip
        if rsds:
            tunneld = await stack.enter_async_context(VirtualTunneld(args.tunneld_port))
            for rsd in rsds.values():
                tunneld.add(rsd.tunnel(), rsd.up)
            print(f"export {TUNNELD_ADDRESS}={tunneld.address}", flush=True)
        for phone, net in zip(phones, networks, strict=True):
            print(describe(phone, net, args.bundle, rsds.get(phone.udid)), file=sys.stderr,
                  flush=True)  # fmt: skip
            if phone.instruments is not None:
                phone.instruments.conditions.changed = functools.partial(tell_condition, phone)
        if len(phones) > 1:
            print('# one plan per phone: [device] kind = "pymobiledevice3", id = its UDID',
                  file=sys.stderr, flush=True)  # fmt: skip
        await advance(sims, args.speed, args.seconds)


def tell_condition(phone: VirtualIPhone, profile: str) -> None:
    """A condition forced or cleared over DVT: one line, so whoever drives the phone sees it."""
    what = f"condition {profile} active" if profile else "no condition active"
    print(f"# {phone.name} {phone.udid}: {what}", file=sys.stderr, flush=True)


def describe(
    phone: VirtualIPhone, net: NetworkLockdownd, bundle: str, rsd: VirtualRsd | None
) -> str:
    route = " (DVT over lockdown)" if phone.service_handler(DVT) else ""
    if rsd is not None:
        route = f" (DVT over RSD at {rsd.address})"
    return (
        f"# {phone.name} {phone.udid}, iOS {phone.product_version}{route}; the app {bundle} "
        f"writes Documents/sustain/bench.log; over the network: "
        f"--connect network --host {net.address}; its console: "
        f"--console {phone.os_trace.process.name}"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
