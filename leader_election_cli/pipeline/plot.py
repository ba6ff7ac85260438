"""The imbalance over time as a PNG: each cluster's worst broker ratio per snapshot, and the threshold."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime


def imbalance_png(points: Iterable[tuple[str, datetime, float]], threshold_pct: float) -> bytes:
    """PNG bytes for (cluster, taken_at, highest broker imbalance ratio) points."""
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    series: dict[str, list[tuple[datetime, float]]] = defaultdict(list)
    for cluster, taken_at, ratio in sorted(points):
        series[cluster].append((taken_at, ratio * 100))
    figure = Figure(figsize=(10, 5), layout="constrained")
    axes = figure.subplots()
    for cluster, values in series.items():
        times, percents = zip(*values, strict=True)
        axes.plot(times, percents, marker="o", label=cluster)
    axes.axhline(threshold_pct, color="red", linestyle="--", label=f"threshold ({threshold_pct:g}%)")
    axes.set_title("Leadership imbalance over time (highest broker ratio per snapshot)")
    axes.set_xlabel("snapshot time (UTC)")
    axes.set_ylabel("imbalance ratio (%)")
    axes.set_ylim(bottom=0)
    axes.legend(loc="best", fontsize="small")
    figure.autofmt_xdate()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()
