"""Python code the app hands out for a trained policy (no Streamlit)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from budgetdag_core import SensorSpec


def _number(value: Any) -> str:
    value = float(value)
    return repr(int(value)) if value.is_integer() else repr(value)


def deployment_snippet(
    spec: SensorSpec, file_name: str, example: Mapping[str, Any] | None = None
) -> str:
    """Runnable code that loads ``file_name`` and runs the policy on one example.

    ``example`` (column -> value, e.g. a test row) stands in for the real
    measurements, so the code runs as it is once the file is downloaded.
    """
    lines = [
        "from budgetdag_core import load_policy_skops",
        "",
        f'model = load_policy_skops("{file_name}")  # checked on load',
        "# model.predict(X) / model.trace(X): X a DataFrame with the feature columns",
        "",
        "# In deployment, one example at a time. observe() takes the measured",
        "# values of the sensor it asked for, as a mapping column -> value;",
        "# model.spec_.groups[sensor] lists that sensor's columns:",
    ]
    for name in spec.names:
        columns = spec.groups[name]
        shown = ", ".join(repr(c) for c in columns[:4])
        more = f", ... ({len(columns)} columns)" if len(columns) > 4 else ""
        lines.append(f"#   {name!r}: [{shown}{more}]")
    if example is not None:
        values = ", ".join(
            f"{column!r}: {_number(example[column])}" for column in spec.columns
        )
        lines += [
            "example = {" + values + "}  # a test row",
            "",
            "",
            "def acquire(sensor):  # your code: measure the sensor's columns",
            "    return {c: example[c] for c in model.spec_.groups[sensor]}",
        ]
    lines += [
        "",
        "",
        "session = model.start()",
        "while (sensor := session.next_sensor()) is not None:",
        "    session.observe(sensor, acquire(sensor))  # {column: value}",
        "print(session.predict(), session.acquired, session.cost)",
    ]
    return "\n".join(lines) + "\n"
