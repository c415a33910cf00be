"""`python -m anemon.devices.virtual`: a virtual iPhone for people without one.

Runs the simulated phone with the bench app launched on one arm, in real time (or faster with
--speed), and prints the `USBMUXD_SOCKET_ADDRESS` to export so that anemon's pymobiledevice3
backend (or the pymobiledevice3 command line) talks to it, the address its lockdownd answers
on over the network (`--connect network --host 127.0.0.1:PORT`) and the app's console process
(`--console PROCESS`, instead of `--bundle`/`--log`). Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys

from anemon.devices.virtual.lockdownd import NetworkLockdownd
from anemon.devices.virtual.phone import VirtualIPhone

TICK_S = 0.25
DEFAULT_BUNDLE = "com.example.bench"
DEFAULT_ARM = "minicpm5_1b_ane_pal8"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m anemon.devices.virtual", description=__doc__)
    parser.add_argument("--bundle", default=DEFAULT_BUNDLE, help="the bench app's bundle id")
    parser.add_argument("--arm", default=DEFAULT_ARM, help="AB_MODEL of the launch")
    parser.add_argument("--speed", type=float, default=1.0, help="simulated seconds per second")
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: never)")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    from anemon.simulator import SimConfig, SimulatedIPhone

    sim = SimulatedIPhone(SimConfig())
    sim.launch(args.bundle, {"AB_MODEL": args.arm})
    async with VirtualIPhone(sim, bundles=[args.bundle]) as phone, NetworkLockdownd(phone) as net:
        print(f"export USBMUXD_SOCKET_ADDRESS={phone.usbmux_address}", flush=True)
        print(
            f"# {phone.name} {phone.udid}, iOS {phone.product_version}; the app {args.bundle} "
            f"writes Documents/sustain/bench.log; over the network: "
            f"--connect network --host {net.address}; its console: "
            f"--console {phone.os_trace.process.name}",
            file=sys.stderr,
            flush=True,
        )
        loop = asyncio.get_running_loop()
        start = last = loop.time()
        while not args.seconds or last - start < args.seconds:
            await asyncio.sleep(TICK_S)
            now = loop.time()
            sim.advance((now - last) * args.speed)
            last = now


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
