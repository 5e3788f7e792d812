"""The trend page's plot as numbers for an SVG template: pass rate with its interval
and pass^j per experiment, oldest left; no script draws it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from passhat.view.data import TrendPoint

WIDTH, HEIGHT = 760, 280
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 36


@dataclass(frozen=True)
class Dot:
    """One experiment on the plot: where its figures sit, and where it links."""

    x: float
    rate_y: float | None
    low_y: float | None
    high_y: float | None
    hat_y: float | None
    point: TrendPoint


@dataclass(frozen=True)
class Plot:
    width: int
    height: int
    dots: tuple[Dot, ...]
    grid: tuple[tuple[float, str], ...]
    """(y, label) of the horizontal lines at 0, 25, 50, 75 and 100 %."""

    def line(self, which: str) -> str:
        """SVG points of the pass rate (`rate_y`) or pass^j (`hat_y`) line."""
        values = [(d.x, getattr(d, which)) for d in self.dots]
        return " ".join(f"{x:.1f},{y:.1f}" for x, y in values if y is not None)


def _y(value: float) -> float:
    return TOP + (1.0 - value) * (HEIGHT - TOP - BOTTOM)


def trend_plot(points: Sequence[TrendPoint]) -> Plot:
    span = WIDTH - LEFT - RIGHT
    dots = []
    for i, point in enumerate(points):
        x = LEFT + (span / 2 if len(points) == 1 else i * span / (len(points) - 1))
        rate, hat = point.summary.rate, point.summary.hat
        interval = rate.interval if rate else None
        dots.append(
            Dot(
                x,
                _y(rate.value) if rate else None,
                _y(interval.low) if interval else None,
                _y(interval.high) if interval else None,
                _y(hat.value) if hat else None,
                point,
            )
        )
    grid = tuple((_y(v / 4), f"{v * 25}%") for v in range(5))
    return Plot(WIDTH, HEIGHT, tuple(dots), grid)


__all__ = ["Plot", "trend_plot"]
