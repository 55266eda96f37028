"""Plots as inline SVG text, drawn here from numbers (no plotting library, no script):
the roofline scatter of a module's ops and its memory timeline. Every text drawn from the
input is XML-escaped; the SVG carries role="img" and a <title> for screen readers."""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

from hloscope.units import human_bytes, human_seconds, human_si

W, H = 720, 400  # the drawing
L, R, T, B = 80, 20, 20, 56  # margins: left axis labels, right, top, bottom axis labels
_CATEGORY = {
    "matmul": "#1f77b4", "convolution": "#1f77b4", "elementwise": "#7f7f7f",
    "collective": "#e6550d", "data formatting": "#bcbd22", "custom kernel": "#9467bd",
    "control flow": "#2ca02c", "reduction": "#17becf",
}


@dataclass
class Point:
    intensity: float  # FLOPs per byte
    flops_per_second: float  # achieved: FLOPs / time (measured, else the roofline bound)
    seconds: float  # the op's time over the step (all executions)
    label: str  # shown in the point's tooltip
    category: str = "other"


def _decades(lo: float, hi: float) -> list[float]:
    return [10.0 ** k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def roofline_svg(points: list[Point], peak_flops: float, bandwidth: float, chip: str,
                 measured: bool) -> str:
    """Log-log roofline: achieved FLOP/s against arithmetic intensity, the chip's roof
    (memory slope then compute plateau) and its ridge line. Point area follows time."""
    pts = [p for p in points if p.intensity > 0 and p.flops_per_second > 0]
    ridge = peak_flops / bandwidth if bandwidth else 1.0
    xs = [p.intensity for p in pts] + [ridge / 100, ridge * 10]
    ys = [p.flops_per_second for p in pts] + [peak_flops * 2, peak_flops / 1e4]
    x_lo, x_hi = min(xs) / 2, max(xs) * 2
    y_lo, y_hi = min(ys) / 2, max(ys) * 1.5
    lx0, lx1, ly0, ly1 = (math.log10(v) for v in (x_lo, x_hi, y_lo, y_hi))

    def px(x: float) -> float:
        return L + (math.log10(x) - lx0) / (lx1 - lx0) * (W - L - R)

    def py(y: float) -> float:
        return H - B - (math.log10(y) - ly0) / (ly1 - ly0) * (H - T - B)

    what = "measured" if measured else "roofline-bound"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {W} {H}" '
           f'width="{W}" height="{H}" role="img" aria-labelledby="rf-title">',
           f'<title id="rf-title">Roofline on {escape(chip)}: {len(pts)} ops, achieved FLOP/s '
           f'({what} time) against arithmetic intensity</title>',
           f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="#fff" stroke="#999"/>']
    for x in _decades(x_lo, x_hi):
        if x_lo <= x <= x_hi:
            out.append(f'<line x1="{px(x):.1f}" y1="{T}" x2="{px(x):.1f}" y2="{H - B}" stroke="#eee"/>'
                       f'<text x="{px(x):.1f}" y="{H - B + 16}" text-anchor="middle" '
                       f'class="tick">{x:g}</text>')
    for y in _decades(y_lo, y_hi):
        if y_lo <= y <= y_hi:
            out.append(f'<line x1="{L}" y1="{py(y):.1f}" x2="{W - R}" y2="{py(y):.1f}" stroke="#eee"/>'
                       f'<text x="{L - 6}" y="{py(y) + 4:.1f}" text-anchor="end" '
                       f'class="tick">{human_si(y, "")}</text>')
    # the roof: bandwidth x intensity up to the ridge, then the peak
    roof = [(x_lo, min(peak_flops, bandwidth * x_lo)), (ridge, peak_flops), (x_hi, peak_flops)]
    roof = [(x, max(y, y_lo)) for x, y in roof]
    out.append('<polyline class="roof" fill="none" stroke="#d62728" stroke-width="2" points="'
               + " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in roof) + '"/>')
    if x_lo < ridge < x_hi:
        out.append(f'<line class="ridge" x1="{px(ridge):.1f}" y1="{T}" x2="{px(ridge):.1f}" '
                   f'y2="{H - B}" stroke="#d62728" stroke-dasharray="4 3"/>'
                   f'<text x="{px(ridge) + 4:.1f}" y="{H - B - 6}" class="note">ridge {ridge:.0f} '
                   f'FLOP/B</text>')
    # top left lies above the roof, where no op can be: the label never covers a point
    out.append(f'<text x="{L + 6}" y="{T + 14}" class="note">roof: peak {human_si(peak_flops, "FLOP/s")}, '
               f'HBM {human_si(bandwidth, "B/s")}</text>')
    biggest = max((p.seconds for p in pts), default=0.0) or 1.0
    for p in sorted(pts, key=lambda p: -p.seconds):  # small points drawn last, on top
        r = 2.5 + 9 * math.sqrt(p.seconds / biggest)
        colour = _CATEGORY.get(p.category.replace(" fusion", ""), "#8c564b")
        out.append(f'<circle class="op" cx="{px(p.intensity):.1f}" cy="{py(p.flops_per_second):.1f}" '
                   f'r="{r:.1f}" fill="{colour}" fill-opacity="0.55" stroke="{colour}">'
                   f'<title>{escape(p.label)}</title></circle>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle" class="axis">'
               f'arithmetic intensity (FLOPs per HBM byte, log)</text>'
               f'<text transform="translate(16 {(T + H - B) / 2}) rotate(-90)" text-anchor="middle" '
               f'class="axis">achieved FLOP/s ({what}, log)</text>')
    out.append("</svg>")
    return "".join(out)


def timeline_svg(timeline: list[tuple[int, str, int]], capacity: int | None,
                 peak_step: int, max_points: int = 1200) -> str:
    """Bytes of HBM temporaries live at each schedule step, the peak marked; long schedules
    are bucketed keeping each bucket's maximum, so the peak survives."""
    if not timeline:
        return ""
    steps = [t[0] for t in timeline]
    values = [t[2] for t in timeline]
    if len(timeline) > max_points:
        size = math.ceil(len(timeline) / max_points)
        buckets = [range(i, min(i + size, len(timeline))) for i in range(0, len(timeline), size)]
        keep = [max(b, key=lambda k: values[k]) for b in buckets]
        steps, values = [steps[k] for k in keep], [values[k] for k in keep]
    x_hi = max(steps) or 1
    y_hi = max(max(values), 1) * 1.15

    def px(x: float) -> float:
        return L + x / x_hi * (W - L - R)

    def py(y: float) -> float:
        return H - B - y / y_hi * (H - T - B)

    peak = max(range(len(values)), key=lambda k: values[k])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 {W} {H}" '
           f'width="{W}" height="{H}" role="img" aria-labelledby="tl-title">',
           f'<title id="tl-title">HBM temporaries live over the schedule; peak '
           f'{human_bytes(values[peak])} at step {steps[peak]}</title>',
           f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="#fff" stroke="#999"/>']
    ticks = _byte_ticks(y_hi)
    decimals = 0 if all((t / _unit(y_hi)).is_integer() for t in ticks) else 1
    for y in ticks:
        out.append(f'<line x1="{L}" y1="{py(y):.1f}" x2="{W - R}" y2="{py(y):.1f}" stroke="#eee"/>'
                   f'<text x="{L - 6}" y="{py(y) + 4:.1f}" text-anchor="end" class="tick">'
                   f'{human_bytes(y, decimals)}</text>')
    for k in range(6):
        x = x_hi * k / 5
        out.append(f'<text x="{px(x):.1f}" y="{H - B + 16}" text-anchor="middle" class="tick">'
                   f'{x:.0f}</text>')
    path = [f"M{px(steps[0]):.1f},{py(0):.1f}"]
    path += [f"L{px(s):.1f},{py(v):.1f}" for s, v in zip(steps, values, strict=True)]
    path.append(f"L{px(steps[-1]):.1f},{py(0):.1f}Z")
    out.append(f'<path class="area" d="{"".join(path)}" fill="#9ecae1" stroke="#3182bd"/>')
    out.append(f'<circle class="peak" cx="{px(steps[peak]):.1f}" cy="{py(values[peak]):.1f}" r="5" '
               f'fill="#d62728"><title>peak {human_bytes(values[peak])} at step {steps[peak]}'
               f'</title></circle>')
    if capacity and capacity < y_hi * 4:
        note = f"chip HBM {human_bytes(capacity)}"
        if capacity <= y_hi:
            out.append(f'<line x1="{L}" y1="{py(capacity):.1f}" x2="{W - R}" y2="{py(capacity):.1f}" '
                       f'stroke="#d62728" stroke-dasharray="4 3"/>')
        out.append(f'<text x="{W - R - 4}" y="{T + 14}" text-anchor="end" class="note">{note}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle" class="axis">'
               f'schedule step (instruction index in the entry computation)</text>'
               f'<text transform="translate(16 {(T + H - B) / 2}) rotate(-90)" text-anchor="middle" '
               f'class="axis">HBM temporaries live</text>')
    out.append("</svg>")
    return "".join(out)


def _unit(n: float) -> int:
    """The binary unit human_bytes prints n in."""
    unit = 1
    while n >= unit * 1024 and unit < 1 << 40:
        unit <<= 10
    return unit


def _byte_ticks(top: float) -> list[float]:
    """0 and round steps (1, 2 or 5 x 10^k of the unit top is printed in) up to top."""
    unit = _unit(top)
    raw = top / unit / 5
    step = min((m * 10.0 ** math.floor(math.log10(raw)) for m in (1, 2, 5, 10)
                if m * 10.0 ** math.floor(math.log10(raw)) >= raw), default=raw) if raw > 0 else 1.0
    return [k * step * unit for k in range(int(top / unit / step) + 1)]


def point_label(name: str, opcode: str, flops: float, nbytes: float, seconds: float) -> str:
    return (f"%{name} ({opcode}): {human_si(flops, 'FLOP')}, {human_bytes(nbytes)}, "
            f"{human_seconds(seconds)}")


__all__ = ["Point", "point_label", "roofline_svg", "timeline_svg"]
