"""The imbalance over time as a PNG: each cluster's worst broker ratio per snapshot, and the threshold.

With many clusters only the TOP_N worst (by their highest ratio, then name) are drawn, each in its own
colour of a qualitative palette, with the legend outside the axes so it hides no line.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

TOP_N = 10  # matplotlib's tab10: ten colours told apart at a glance


def worst_clusters(series: dict[str, list[tuple[datetime, float]]], top_n: int = TOP_N) -> list[str]:
    """The `top_n` clusters with the highest ratio at any snapshot (ties by name), worst first."""
    return sorted(series, key=lambda cluster: (-max(p for _, p in series[cluster]), cluster))[:top_n]


def imbalance_png(points: Iterable[tuple[str, datetime, float]], threshold_pct: float) -> bytes:
    """PNG bytes for (cluster, taken_at, highest broker imbalance ratio) points."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure  # no pyplot: no global state, no display needed

    series: dict[str, list[tuple[datetime, float]]] = defaultdict(list)
    for cluster, taken_at, ratio in sorted(points):
        series[cluster].append((taken_at, ratio * 100))
    shown = worst_clusters(series)
    figure = Figure(figsize=(12, 5.5), layout="constrained")
    axes = figure.subplots()
    colours = colormaps["tab10"].colors
    for number, cluster in enumerate(shown):
        times, percents = zip(*series[cluster], strict=True)
        axes.plot(times, percents, marker="o", markersize=3, color=colours[number % len(colours)], label=cluster)
    axes.axhline(threshold_pct, color="black", linestyle="--", label=f"threshold ({threshold_pct:g}%)")
    title = "Leadership imbalance over time (highest broker ratio per snapshot)"
    if len(shown) < len(series):
        title += f": the {len(shown)} worst of {len(series)} clusters"
    axes.set_title(title)
    axes.set_xlabel("snapshot time (UTC)")
    axes.set_ylabel("imbalance ratio (%)")
    axes.set_ylim(bottom=0)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small", borderaxespad=0)
    figure.autofmt_xdate()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()
