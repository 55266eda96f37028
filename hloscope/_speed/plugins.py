"""Whether any installed distribution may declare `hloscope.rules` entry points, without
importlib.metadata (which takes ~15 ms to say the same)."""

from __future__ import annotations

import os
import sys

from hloscope._speed import enabled


def may_have_plugins(group: str = "hloscope.rules") -> bool:
    """False only when no distribution on sys.path declares entry points of `group` (a
    direct look at their entry_points.txt). Anything unusual on sys.path, or the tricks
    off: True (ask importlib.metadata)."""
    if not enabled():
        return True
    for base in sys.path:
        try:
            entries = os.scandir(base or ".")
        except (NotADirectoryError, FileNotFoundError):
            if os.path.isfile(base):  # a zip on sys.path may hold distributions
                return True
            continue
        except OSError:
            return True
        with entries:
            for entry in entries:
                if entry.name.endswith((".dist-info", ".egg-info")):
                    try:
                        with open(os.path.join(entry.path, "entry_points.txt"), encoding="utf-8") as f:
                            if f"[{group}]" in f.read():
                                return True
                    except OSError:
                        continue
    return False
