"""numpy as every part of `passhat.stats` uses it: loaded on the first statistic
computed (`passhat --help`, `check` and `list` compute none), and the array types
the signatures name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from passhat._lazy import lazy_import

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

    Floats = NDArray[np.float64]
    Ints = NDArray[np.int64]
else:
    np = lazy_import("numpy")  # imported when a statistic is first computed

__all__ = ["ArrayLike", "Floats", "Ints", "np"]
