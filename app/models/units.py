"""Byte counts as people read them (decimal units, like disk vendors and the hub)."""

from __future__ import annotations


def human(n: int) -> str:
    """16796015136 -> '16.8 GB', 92361271 -> '92.4 MB'."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
