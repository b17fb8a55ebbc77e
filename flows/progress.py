"""Progress bars for the long stages of a run in a terminal (tqdm; Prefect's task states show the rest)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def progress_bar(enabled: bool, total: int, what: str, unit: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar for a long stage, or None when bars are off."""
    if not enabled or total == 0:
        yield None
        return
    with tqdm(total=total, desc=what, unit=unit, leave=False) as bar:
        yield bar.update
