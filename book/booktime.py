"""Timing helper shared by the book's pages (import booktime; the kernel runs in book/)."""

import time


def best_of(fn, repeats=7):
    """(fastest wall-clock seconds over `repeats` calls of fn(), result of the last call).

    The minimum is what the code itself costs: slower runs were interrupted by other programs.
    """
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out
