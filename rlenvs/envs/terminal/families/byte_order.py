"""Byte order, as the instructions name it. Orders the instruction calls "byte order" are
computed here by sorting UTF-8 bytes, which is what `LC_ALL=C sort` does; the reference
solutions set `LC_ALL=C` wherever order matters."""

from __future__ import annotations

from collections.abc import Sequence

BYTE_ORDER = "in byte order (as `LC_ALL=C sort` orders them: uppercase before lowercase)"


def byte_sorted(items: Sequence[str]) -> list[str]:
    """Sorted as `LC_ALL=C sort` sorts: by UTF-8 bytes."""
    return sorted(items, key=lambda item: item.encode())
