"""The apps' data containers: files by bundle and path, appended to, surviving launches."""

from __future__ import annotations

from collections.abc import Mapping


class Containers:
    def __init__(self) -> None:
        self._files: dict[str, dict[str, bytearray]] = {}

    def append(self, bundle: str, path: str, data: bytes) -> None:
        self._files.setdefault(bundle, {}).setdefault(path, bytearray()).extend(data)

    def files(self, bundle: str) -> Mapping[str, bytes]:
        """Path in the container -> full content (a copy)."""
        return {path: bytes(data) for path, data in self._files.get(bundle, {}).items()}

    def read(self, bundle: str, path: str, offset: int = 0, size: int | None = None) -> bytes:
        data = self._files.get(bundle, {}).get(path)
        if data is None:
            raise FileNotFoundError(f"no {path!r} in the container of {bundle}")
        end = len(data) if size is None else offset + size
        return bytes(data[offset:end])
