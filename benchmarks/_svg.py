"""Small, dependency-free SVG charts for the benchmark report.

The report's figures are committed files that a test regenerates from the
saved results and compares byte for byte, so they must be deterministic (no
dates, ids or renderer versions in the file) and must not need a plotting
library or a browser: a line chart of a few series is a few dozen SVG
elements. GitHub and Sphinx's HTML builder both show SVG images.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

#: Canvas and plot area (pixels): the legend sits right of the axes.
WIDTH, HEIGHT = 760, 420
LEFT, RIGHT, TOP, BOTTOM = 64, 560, 40, 360
#: A legend label's text starts this far right of the axes, and each of its
#: characters takes at most about this many pixels at the charts' font size.
LEGEND_TEXT_X, CHAR_WIDTH = 44, 7.0


def legend_width(labels: list[str]) -> int:
    """Canvas width that shows every legend label whole (at least ``WIDTH``).

    Labels that differ only at their end (the two fixed-subset hulls) must not
    be cut where the canvas ends.
    """
    longest = max((len(label) for label in labels), default=0)
    return max(WIDTH, math.ceil(RIGHT + LEGEND_TEXT_X + CHAR_WIDTH * longest + 8))


@dataclass
class Series:
    """One method on a chart: points, drawn as a line and/or markers."""

    label: str
    x: list[float]
    y: list[float]
    colour: str
    line: bool = True
    dashed: bool = False
    marker: str = ""  # "", "dot", "star"
    extra: dict = field(default_factory=dict)


def _nice_step(span: float, target: int = 5) -> float:
    """A round tick step (1, 2 or 5 × 10^k) giving about ``target`` ticks."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / target
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def _ticks(low: float, high: float, log: bool) -> list[float]:
    if log:
        first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
        return [10.0**k for k in range(first, last + 1)]
    step = _nice_step(high - low)
    start = math.floor(low / step) * step
    ticks, k = [], 0
    while start + k * step <= high + step * 1e-9:
        ticks.append(round(start + k * step, 12))
        k += 1
    return ticks


def _label(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000 or abs(v) < 0.001:
        return f"{v:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{v:.6g}"


def _fmt(v: float) -> str:
    return f"{v:.1f}"


def line_chart(
    series: list[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    log_y: bool = False,
) -> str:
    """An SVG line chart of ``series`` with axes, ticks and a legend."""
    xs = [v for s in series for v in s.x if math.isfinite(v)]
    ys = [v for s in series for v in s.y if math.isfinite(v) and (v > 0 or not log_y)]
    x_low, x_high = 0.0, max(xs) if xs else 1.0
    if log_y:
        y_low, y_high = min(ys), max(ys)
        y_low, y_high = (
            10 ** math.floor(math.log10(y_low)),
            10 ** math.ceil(math.log10(y_high)),
        )
    else:
        y_low, y_high = 0.0, max(ys) if ys else 1.0
    x_ticks, y_ticks = _ticks(x_low, x_high, False), _ticks(y_low, y_high, log_y)
    x_high, y_high = max(x_high, x_ticks[-1]), max(y_high, y_ticks[-1])

    def px(x: float) -> float:
        return LEFT + (x - x_low) / ((x_high - x_low) or 1) * (RIGHT - LEFT)

    def py(y: float) -> float:
        if log_y:
            t = (math.log10(y) - math.log10(y_low)) / (
                math.log10(y_high) - math.log10(y_low) or 1
            )
        else:
            t = (y - y_low) / ((y_high - y_low) or 1)
        return BOTTOM - t * (BOTTOM - TOP)

    width = legend_width([s.label for s in series])
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{HEIGHT}" viewBox="0 0 {width} {HEIGHT}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{(LEFT + RIGHT) / 2:.0f}" y="22" text-anchor="middle" '
        f'font-size="15">{escape(title)}</text>',
    ]
    for t in x_ticks:
        x = _fmt(px(t))
        out.append(
            f'<line x1="{x}" y1="{TOP}" x2="{x}" y2="{BOTTOM}" stroke="#eeeeee"/>'
        )
        out.append(
            f'<text x="{x}" y="{BOTTOM + 16}" text-anchor="middle">{_label(t)}</text>'
        )
    for t in y_ticks:
        y = _fmt(py(t))
        out.append(
            f'<line x1="{LEFT}" y1="{y}" x2="{RIGHT}" y2="{y}" stroke="#eeeeee"/>'
        )
        out.append(
            f'<text x="{LEFT - 6}" y="{y}" text-anchor="end" '
            f'dominant-baseline="middle">{_label(t)}</text>'
        )
    out += [
        f'<rect x="{LEFT}" y="{TOP}" width="{RIGHT - LEFT}" '
        f'height="{BOTTOM - TOP}" fill="none" stroke="#444444"/>',
        f'<text x="{(LEFT + RIGHT) / 2:.0f}" y="{BOTTOM + 40}" '
        f'text-anchor="middle">{escape(x_label)}</text>',
        f'<text transform="translate(16 {(TOP + BOTTOM) / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>',
    ]
    for s in series:
        # On a log axis an error of 0 sits on the axis' floor.
        pts = [
            (px(x), py(max(y, y_low) if log_y else y))
            for x, y in zip(s.x, s.y, strict=True)
            if math.isfinite(x) and math.isfinite(y)
        ]
        if s.line and len(pts) > 1:
            path = " ".join(f"{_fmt(a)},{_fmt(b)}" for a, b in pts)
            dash = ' stroke-dasharray="5 4"' if s.dashed else ""
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{s.colour}" '
                f'stroke-width="2"{dash}/>'
            )
        for a, b in pts if s.marker else []:
            size = 7 if s.marker == "star" else 3
            shape = "rect" if s.marker == "star" else "circle"
            if shape == "circle":
                out.append(
                    f'<circle cx="{_fmt(a)}" cy="{_fmt(b)}" r="{size}" '
                    f'fill="{s.colour}"/>'
                )
            else:
                out.append(
                    f'<rect x="{_fmt(a - size / 2)}" y="{_fmt(b - size / 2)}" '
                    f'width="{size}" height="{size}" fill="{s.colour}"/>'
                )
    for i, s in enumerate(series):
        y = TOP + 8 + 20 * i
        x0 = RIGHT + 14
        if s.line:
            dash = ' stroke-dasharray="5 4"' if s.dashed else ""
            out.append(
                f'<line x1="{x0}" y1="{y}" x2="{x0 + 24}" y2="{y}" '
                f'stroke="{s.colour}" stroke-width="2"{dash}/>'
            )
        elif s.marker == "star":
            out.append(
                f'<rect x="{x0 + 8}" y="{y - 4}" width="8" height="8" '
                f'fill="{s.colour}"/>'
            )
        else:
            out.append(f'<circle cx="{x0 + 12}" cy="{y}" r="4" fill="{s.colour}"/>')
        out.append(
            f'<text x="{RIGHT + LEGEND_TEXT_X}" y="{y}" dominant-baseline="middle">'
            f"{escape(s.label)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def dot_chart(
    rows: list[str],
    series: list[Series],
    *,
    title: str,
    x_label: str,
) -> str:
    """Categories down the side, one dot per series and row on a log x axis.

    ``series[i].x`` holds one value per row (NaN: not measured); ``y`` is unused.
    """
    values = [v for s in series for v in s.x if math.isfinite(v) and v > 0]
    low = 10 ** math.floor(math.log10(min(values))) if values else 0.1
    high = 10 ** math.ceil(math.log10(max(values))) if values else 10.0
    row_h = 26
    top = TOP + 10
    height = top + row_h * len(rows) + 60
    left = 150

    def px(v: float) -> float:
        t = (math.log10(v) - math.log10(low)) / (math.log10(high) - math.log10(low))
        return left + t * (RIGHT - left)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{(left + RIGHT) / 2:.0f}" y="22" text-anchor="middle" '
        f'font-size="15">{escape(title)}</text>',
    ]
    bottom = top + row_h * len(rows)
    for t in _ticks(low, high, True):
        x = _fmt(px(t))
        out.append(
            f'<line x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="#dddddd"/>'
        )
        out.append(
            f'<text x="{x}" y="{bottom + 16}" text-anchor="middle">{_label(t)}</text>'
        )
    one = _fmt(px(1.0)) if low <= 1.0 <= high else None
    if one:
        out.append(
            f'<line x1="{one}" y1="{top}" x2="{one}" y2="{bottom}" '
            'stroke="#444444" stroke-dasharray="3 3"/>'
        )
    for i, name in enumerate(rows):
        y = top + row_h * i + row_h / 2
        out.append(
            f'<text x="{left - 8}" y="{_fmt(y)}" text-anchor="end" '
            f'dominant-baseline="middle">{escape(name)}</text>'
        )
        for s in series:
            v = s.x[i]
            if math.isfinite(v) and v > 0:
                out.append(
                    f'<circle cx="{_fmt(px(v))}" cy="{_fmt(y)}" r="5" '
                    f'fill="{s.colour}" fill-opacity="0.85"/>'
                )
    out.append(
        f'<text x="{(left + RIGHT) / 2:.0f}" y="{bottom + 40}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    for i, s in enumerate(series):
        y = top + 8 + 20 * i
        out.append(f'<circle cx="{RIGHT + 26}" cy="{y}" r="5" fill="{s.colour}"/>')
        out.append(
            f'<text x="{RIGHT + 36}" y="{y}" dominant-baseline="middle">'
            f"{escape(s.label)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
