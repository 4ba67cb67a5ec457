"""Byte sizes and durations as people read them: ``4K``, ``1G``, ``1:05``.

Contract: sizes are binary (K = 1024); :func:`format_size` gives the shortest exact form.
"""
import re

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``"64K"`` -> 65536; plain integers are bytes. Raises ValueError otherwise."""
    m = re.fullmatch(r"\s*([0-9]+)\s*([KMGT]?)(i?B)?\s*", str(text), re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r} (expected e.g. 4096, 64K, 1G)")
    return int(m[1]) * _SUFFIX[m[2].upper()]


def format_size(n: int) -> str:
    """65536 -> ``"64K"``; sizes that are not whole units stay in bytes."""
    for suffix in ("T", "G", "M", "K"):
        unit = _SUFFIX[suffix]
        if n >= unit and n % unit == 0:
            return f"{n // unit}{suffix}"
    return str(n)


def format_duration(seconds: float) -> str:
    """Seconds as ``m:ss`` (or ``h:mm:ss``)."""
    s = int(round(max(0.0, seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
