"""Human-readable byte counts and durations, for messages and tables."""

from __future__ import annotations


def human_bytes(n: float, decimals: int = 1) -> str:
    n = float(n) if abs(n) < 1e300 else 1e300  # absurd sizes from broken input stay printable
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.{decimals}f} {unit}"
        n /= 1024
    return f"{n:.{decimals}f} TiB"


def human_seconds(t: float, decimals: int = 2) -> str:
    """`decimals` for seconds and milliseconds; microseconds always show two."""
    if t >= 1:
        return f"{t:.{decimals}f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.{decimals}f} ms"
    return f"{t * 1e6:.2f} us"


def human_si(v: float, unit: str = "", decimals: int | None = None) -> str:
    """4.32 GFLOP: an SI prefix from k to P, the number as `g` or with `decimals`."""
    for p, name in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= p:
            number = f"{v / p:g}" if decimals is None else f"{v / p:.{decimals}f}"
            return f"{number} {name}{unit}"
    return f"{v:g} {unit}".rstrip()


def html_table(caption: str, headers: list[str], rows: list[list[object]], more: int = 0) -> str:
    """A small HTML table for notebooks (`_repr_html_`), every value escaped."""
    from html import escape

    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    tail = f"<p>and {more} more</p>" if more else ""
    return (f"<div class=\"hloscope\"><b>{escape(caption)}</b><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>{tail}</div>")
