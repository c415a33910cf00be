"""A fake `xcrun` that answers the `devicectl` commands anemon uses (docs/devices.md).

Run as `xcrun devicectl ...` through a wrapper on PATH (see FakeXcrun). Its state lives in
the directory named by $FAKE_XCRUN_STATE:
- `config.json`: what the tests configure (see DEFAULTS); launches consume `refusals`;
- `calls.jsonl`: every argv after `xcrun devicectl`, one JSON list a line;
- `containers/<bundle>/<path>`: the apps' data containers;
- `running/<pid>.json`: the launched fake apps (bench_app.py) still running;
- `launched.jsonl`: every app started ({"pid", "bundle", "env"}), in order.
JSON documents use the old layout, or jsonVersion 5 when $FAKE_XCRUN_JSON_VERSION is 5.
Failures print devicectl's stderr text, write the JSON error document and exit 1.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import plistlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STATE_ENV = "FAKE_XCRUN_STATE"
JSON_VERSION_ENV = "FAKE_XCRUN_JSON_VERSION"
BENCH_APP = Path(__file__).with_name("bench_app.py")
CORE = "com.apple.dt.CoreDeviceError"

PHONE = {
    "identifier": "7B3F2D1C-1111-4A5B-9C8D-0123456789AB",
    "udid": "00008130-001A2B3C4D5E6F70",
    "name": "Bench iPhone",
    "osVersionNumber": "18.2",
    "osBuildUpdate": "22C152",
    "productType": "iPhone16,1",
    "marketingName": "iPhone 15 Pro",
    "reality": "physical",
}
SIMULATED = {
    "identifier": "0F0F0F0F-2222-4333-8444-555555555555",
    "udid": "0F0F0F0F-2222-4333-8444-555555555555",
    "name": "iPhone 16 (Simulator)",
    "osVersionNumber": "18.2",
    "osBuildUpdate": "22C150",
    "productType": "iPhone17,3",
    "marketingName": "iPhone 16",
    "reality": "simulated",
}

DEFAULTS: dict[str, Any] = {
    "devices": [PHONE, SIMULATED],
    "installed": ["com.example.bench"],
    "install_bundle": "com.example.bench",  # for an .app without Info.plist
    "refusals": [],  # one per launch, consumed: "none" | "Busy" | "Locked" | "Security" | ...
    "gone": "",  # "" | "invalidated" | "not_found": every device command fails so
    "fail": {},  # {"device info lockState": "ddi"}: that command fails with that error
    "locked": False,
    "sleep": {},  # {"device info lockState": 30}: that command hangs so long first
    "trial_s": 0.02,  # real seconds per fake trial
}


class Failure(Exception):
    """A devicectl error: its NSError dict (for the JSON) and stderr follow from it."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error["userInfo"]["NSLocalizedDescription"]["string"])
        self.error = error


def ns_error(
    code: int, domain: str, description: str, underlying: dict[str, Any] | None = None, **fields
) -> dict[str, Any]:
    info: dict[str, Any] = {"NSLocalizedDescription": {"string": description}}
    info.update({key: {"string": value} for key, value in fields.items()})
    if underlying is not None:
        info["NSUnderlyingError"] = {"error": underlying}
    return {"code": code, "domain": domain, "userInfo": info}


def launch_refusal(reason: str, bundle: str) -> dict[str, Any]:
    """CoreDeviceError 10002 with, below it, FrontBoard's reason (none for "none")."""
    reasons = {
        "Locked": f"Unable to launch {bundle} because the device was not, "
        "or could not be, unlocked.",
        "Busy": "Application failed preflight checks",
        "Security": f"Unable to launch {bundle} because it has an invalid code signature, "
        "inadequate entitlements or its profile has not been explicitly trusted by the user.",
        "NotFound": "Application info provider (FBSApplicationLibrary) "
        f"returned nil for “{bundle}”",
    }
    underlying = None
    if reason in reasons:
        underlying = ns_error(
            1,
            "FBSOpenApplicationServiceErrorDomain",
            f"The request to open “{bundle}” failed.",
            BSErrorCodeDescription=reason,
            NSLocalizedFailureReason=reasons[reason],
        )
    return ns_error(
        10002, CORE, "The application failed to launch.", underlying, BundleIdentifier=bundle
    )


ERRORS: dict[str, Callable[[], dict[str, Any]]] = {
    "invalidated": lambda: ns_error(
        4,
        CORE,
        "The operation couldn’t be completed.",
        ns_error(
            1,
            "com.apple.dt.RemotePairing.ControlChannelConnectionError",
            "Connection was invalidated",
        ),
    ),
    "not_found": lambda: ns_error(1000, CORE, "The specified device was not found."),
    "ddi": lambda: ns_error(
        12040, CORE, "The developer disk image could not be mounted on this device."
    ),
    "unsupported": lambda: ns_error(1001, CORE, "The device does not support this capability."),
    "install_failed": lambda: ns_error(3002, CORE, "Failed to install the app on the device."),
}


# -- command line ------------------------------------------------------------------------

COMMANDS = (
    ("list", "devices"),
    ("device", "install", "app"),
    ("device", "process", "launch"),
    ("device", "process", "terminate"),
    ("device", "copy", "from"),
    ("device", "info", "processes"),
    ("device", "info", "lockState"),
    ("device", "info", "apps"),
)
VALUE_OPTIONS = {
    "--bundle-id": "bundle_id",
    "--device": "device",
    "-j": "json",
    "--json-output": "json",
    "-e": "env",
    "--environment-variables": "env",
    "--pid": "pid",
    "--signal": "signal",
    "--domain-type": "domain_type",
    "--domain-identifier": "domain_id",
    "--source": "source",
    "--destination": "destination",
    "-t": "timeout",
    "--timeout": "timeout",
}
FLAGS = {"--terminate-existing", "--start-stopped", "--console", "--kill", "-q", "--quiet", "-v"}


@dataclass
class Command:
    words: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    positionals: list[str] = field(default_factory=list)
    app_args: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return " ".join(self.words)


class UsageError(Exception):
    pass


def parse(args: list[str]) -> Command:
    words = next((c for c in COMMANDS if tuple(args[: len(c)]) == c), None)
    if words is None:
        raise UsageError(f"Error: unknown command {' '.join(args[:3])!r}")
    command = Command(words)
    rest = iter(args[len(words) :])
    for arg in rest:
        if command.words[-1] == "launch" and command.positionals:
            command.app_args.append(arg)  # after the bundle id: the app's own arguments
        elif arg in VALUE_OPTIONS:
            value = next(rest, None)
            if value is None:
                raise UsageError(f"Error: Missing value for '{arg}'")
            command.options[VALUE_OPTIONS[arg]] = value
        elif arg in FLAGS:
            command.flags.add(arg)
        elif arg.startswith("-"):
            raise UsageError(f"Error: Unknown option '{arg}'")
        else:
            command.positionals.append(arg)
    return command


# -- state -------------------------------------------------------------------------------


class State:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.version = int(os.environ.get(JSON_VERSION_ENV) or 2)

    @contextlib.contextmanager
    def config(self) -> Iterator[dict[str, Any]]:
        """The config, locked; changes made inside the block are saved."""
        with open(self.root / "lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            path = self.root / "config.json"
            config = (
                {**DEFAULTS, **json.loads(path.read_text())} if path.exists() else dict(DEFAULTS)
            )
            try:
                yield config
            finally:  # a refusal consumed before failing is consumed all the same
                path.write_text(json.dumps(config, indent=1))

    def container(self, bundle: str) -> Path:
        return self.root / "containers" / bundle

    def running(self) -> dict[int, dict[str, Any]]:
        found = {}
        for marker in (self.root / "running").glob("*.json"):
            with contextlib.suppress(OSError, ValueError):
                found[int(marker.stem)] = json.loads(marker.read_text())
        return found


# -- commands ----------------------------------------------------------------------------


def list_devices(state: State, _command: Command, config: dict[str, Any]) -> dict[str, Any]:
    return {"devices": [device_json(spec, state.version) for spec in config["devices"]]}


def device_json(spec: dict[str, Any], version: int) -> dict[str, Any]:
    connection = {"transportType": "wired", "tunnelState": "connected", "pairingState": "paired"}
    software = {
        "name": spec["name"],
        "osVersionNumber": spec["osVersionNumber"],
        "osBuildUpdate": spec["osBuildUpdate"],
        "developerModeStatus": "enabled",
        "ddiServicesAvailable": True,
        "bootState": "booted",
    }
    hardware = {
        "udid": spec["udid"],
        "productType": spec["productType"],
        "marketingName": spec["marketingName"],
        "platform": "iOS",
        "reality": spec["reality"],
        "internalStorageCapacity": 256000000000,
    }
    device = {
        "identifier": spec["identifier"],
        "connectionProperties": connection,
        "deviceProperties": software,
        "hardwareProperties": hardware,
    }
    if version >= 5:
        wrapped = {
            key: {"stringValue": value} if isinstance(value, str) else value
            for key, value in software.items()
        }
        device["properties"] = {
            "connection": connection,
            "hardware": {
                key: {"stringValue": v} if key == "reality" else v for key, v in hardware.items()
            },
            "software": {k: v for k, v in wrapped.items() if k.startswith("os")},
            "state": {k: v for k, v in wrapped.items() if not k.startswith("os")},
        }
        if spec.get("omit_deprecated"):
            for key in ("connectionProperties", "deviceProperties", "hardwareProperties"):
                del device[key]
    return device


def install(state: State, command: Command, config: dict[str, Any]) -> dict[str, Any]:
    app = Path(command.positionals[0])
    if not app.exists():
        raise Failure(ns_error(3002, CORE, f"Failed to install “{app.name}”: no such bundle."))
    plist = app / "Info.plist"
    bundle = config["install_bundle"]
    if plist.exists():
        bundle = plistlib.loads(plist.read_bytes()).get("CFBundleIdentifier", bundle)
    for percent in (0, 7, 48, 93, 100):
        print(f"{percent:3d}%", flush=True)  # devicectl's progress text
    if bundle not in config["installed"]:
        config["installed"].append(bundle)
    return {
        "installedApplications": [
            {
                "bundleID": bundle,
                "databaseSequenceNumber": 1208,
                "installationURL": f"file:///private/var/containers/Bundle/Application/X/{app.name}/",
            }
        ]
    }


def launch(state: State, command: Command, config: dict[str, Any]) -> dict[str, Any]:
    bundle = command.positionals[0]
    env = json.loads(command.options.get("env", "{}"))
    if config["refusals"]:
        raise Failure(launch_refusal(config["refusals"].pop(0), bundle))
    if bundle not in config["installed"]:
        raise Failure(launch_refusal("NotFound", bundle))
    if "--terminate-existing" in command.flags:
        for pid, info in state.running().items():
            if info["bundle"] == bundle:
                kill(state, pid)
    pid = spawn_app(state, bundle, env, config["trial_s"])
    return {
        "launchOptions": {
            "arguments": command.app_args,
            "environmentVariables": env,
            "startStopped": False,
            "terminateExistingInstances": True,
        },
        "process": {
            "executableURL": {"relative": f"file:///private/var/containers/{bundle}/bench"},
            "processIdentifier": pid,
        },
    }


def spawn_app(state: State, bundle: str, env: dict[str, str], trial_s: float) -> int:
    (state.root / "running").mkdir(exist_ok=True)
    process = subprocess.Popen(
        [
            sys.executable,
            str(BENCH_APP),
            str(state.container(bundle)),
            str(state.root / "running"),
            json.dumps(env),
            str(trial_s),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # never our stdout: the caller reads it to EOF
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    marker = state.root / "running" / f"{process.pid}.json"
    marker.write_text(json.dumps({"bundle": bundle, "env": env}))
    with open(state.root / "launched.jsonl", "a") as launched:
        launched.write(json.dumps({"pid": process.pid, "bundle": bundle, "env": env}) + "\n")
    return process.pid


def terminate(state: State, command: Command, _config: dict[str, Any]) -> dict[str, Any]:
    pid = int(command.options["pid"])
    if pid not in state.running():
        underlying = ns_error(3, "NSPOSIXErrorDomain", "No such process")
        raise Failure(ns_error(10004, CORE, "The process could not be terminated.", underlying))
    kill(state, pid)
    return {"process": {"processIdentifier": pid}}


def kill(state: State, pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(FileNotFoundError):
        (state.root / "running" / f"{pid}.json").unlink()


def copy_from(state: State, command: Command, _config: dict[str, Any]) -> dict[str, Any]:
    bundle, source = command.options["domain_id"], command.options["source"]
    destination = Path(command.options["destination"])
    path = state.container(bundle) / source
    if not path.is_file():
        missing = ns_error(
            260,
            "NSCocoaErrorDomain",
            f"The file “{path.name}” couldn’t be opened because there is no such file.",
        )
        raise Failure(ns_error(7000, CORE, "Failed to copy the file from the device.", missing))
    if destination.exists():
        raise Failure(ns_error(7001, CORE, f"“{destination.name}” already exists."))
    destination.write_bytes(path.read_bytes())
    return {"files": [{"source": source, "destination": str(destination)}]}


def processes(state: State, _command: Command, _config: dict[str, Any]) -> dict[str, Any]:
    running = [{"processIdentifier": 1, "executable": "file:///sbin/launchd"}]
    for pid, info in sorted(state.running().items()):
        running.append(
            {
                "processIdentifier": pid,
                "executable": f"file:///private/var/containers/{info['bundle']}/bench",
            }
        )
    return {"runningProcesses": running}


def lock_state(_state: State, _command: Command, config: dict[str, Any]) -> dict[str, Any]:
    return {"passcodeRequired": bool(config["locked"]), "unlockedSinceBoot": True}


def apps(_state: State, command: Command, config: dict[str, Any]) -> dict[str, Any]:
    """`device info apps [--bundle-id ID]`: the installed apps (only ID's, when asked)."""
    wanted = command.options.get("bundle_id")
    listed = [b for b in config["installed"] if wanted in (None, b)]
    return {"apps": [{"bundleIdentifier": bundle, "name": bundle} for bundle in listed]}


HANDLERS = {
    ("list", "devices"): list_devices,
    ("device", "install", "app"): install,
    ("device", "process", "launch"): launch,
    ("device", "process", "terminate"): terminate,
    ("device", "copy", "from"): copy_from,
    ("device", "info", "processes"): processes,
    ("device", "info", "lockState"): lock_state,
    ("device", "info", "apps"): apps,
}


# -- output ------------------------------------------------------------------------------


def stderr_text(error: dict[str, Any], version: int, first: bool = True) -> str:
    code, domain = error["code"], error["domain"]
    suffix = f"error {code} (0x{code:X}))" if version >= 5 else f"error {code}.)"
    info = error["userInfo"]
    lines = [
        f"{'ERROR: ' if first else '       '}{info['NSLocalizedDescription']['string']} "
        f"({domain} {suffix}"
    ]
    for key, value in info.items():
        if key not in ("NSLocalizedDescription", "NSUnderlyingError"):
            lines.append(f"         {key} = {value['string']}")
    if "NSUnderlyingError" in info:
        lines.append("       " + "-" * 40)
        lines.append(stderr_text(info["NSUnderlyingError"]["error"], version, first=False))
    return "\n".join(lines)


def envelope(command: Command, version: int, outcome: str) -> dict[str, Any]:
    return {
        "info": {
            "arguments": ["devicectl", *command.words],
            "commandType": command.name,
            "environment": {"TERM": "dumb"},
            "jsonVersion": version,
            "outcome": outcome,
            "version": "477.29",
        }
    }


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] != "devicectl":
        tool = argv[1] if len(argv) > 1 else ""
        print(
            f'xcrun: error: unable to find utility "{tool}", not a developer tool or in PATH',
            file=sys.stderr,
        )
        return 72
    state = State(Path(os.environ[STATE_ENV]))
    with open(state.root / "calls.jsonl", "a") as calls:
        calls.write(json.dumps(argv[2:]) + "\n")
    try:
        command = parse(argv[2:])
    except UsageError as e:
        print(e, file=sys.stderr)
        return 64
    document = envelope(command, state.version, "success")
    with state.config() as config:
        delay = config["sleep"].get(command.name, 0)
    time.sleep(delay)  # outside the lock: a hung call must not block the others
    try:
        with state.config() as config:
            failing = config["fail"].get(command.name) or (
                config["gone"] if command.words != ("list", "devices") else ""
            )
            if failing:
                raise Failure(ERRORS[failing]())
            document["result"] = HANDLERS[command.words](state, command, config)
    except Failure as failure:
        document["info"]["outcome"] = "failed"
        document["error"] = failure.error
        if state.version >= 5:
            document["error"]["errorSignature"] = (
                f"({failure.error['domain']} {failure.error['code']})"
            )
        print(stderr_text(failure.error, state.version), file=sys.stderr)
    if "json" in command.options:
        Path(command.options["json"]).write_text(json.dumps(document, ensure_ascii=False))
    return 0 if "error" not in document else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
