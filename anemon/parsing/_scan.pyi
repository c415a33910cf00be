"""The compiled scanner of the columnar path (anemon/parsing/_scan.c)."""

def scan(
    lines: list[str], keys: tuple[bytes, ...], modes: bytes
) -> tuple[bytes, list[bytes | list[str | None] | None]]: ...
