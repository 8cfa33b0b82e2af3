"""Side-by-side measurements: each benchmark times SteerSum's way and the naive/reference way of the
same job in one run, checks they give the same answer, and reports the ratio."""

import time


def best_time(function, *args, repeats: int = 3):
    """The fastest of ``repeats`` calls of ``function(*args)``, in seconds, and the last call's result
    (the least disturbed run: what other processes on the machine add is noise, not the code's cost)."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args)
        times.append(time.perf_counter() - start)
    return min(times), result
