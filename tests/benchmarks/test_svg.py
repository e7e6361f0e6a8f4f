"""The benchmark charts keep every legend label on the canvas."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _svg import CHAR_WIDTH, LEGEND_TEXT_X, RIGHT, WIDTH, Series, line_chart  # noqa: E402


def _chart(labels: list[str]) -> str:
    series = [
        Series(label, [0.0, 1.0], [0.5, 0.1 + i / 100], "#000000")
        for i, label in enumerate(labels)
    ]
    return line_chart(series, title="t", x_label="cost", y_label="error")


def test_a_long_legend_label_widens_the_canvas_to_hold_it():
    long = "fixed-subset hull, chosen on training rows"
    svg = _chart(["DAG", long])
    width = int(re.search(r'<svg [^>]*width="(\d+)"', svg).group(1))
    assert f'viewBox="0 0 {width} ' in svg
    assert width >= RIGHT + LEGEND_TEXT_X + CHAR_WIDTH * len(long)
    # the label's text starts where the width was computed from
    assert f'<text x="{RIGHT + LEGEND_TEXT_X}"' in svg and long in svg


def test_short_legend_labels_keep_the_usual_canvas():
    svg = _chart(["DAG", "cascade"])
    assert f'width="{WIDTH}" height=' in svg
