"""The evaluation leaderboard (``python -m benchmarks leaderboard``): every system of every variant on the
variant's test sets, with the control effect and the pasted row beside each.

* :mod:`.harness` runs it: which systems, the cached evaluations, sharding over processes;
* :mod:`.cli` is its command line;
* :mod:`.tables` writes ``leaderboard.md``, the plots and ``leaderboard.json``;
* :mod:`.guidance` adds the control-strength table from the models' guidance sweeps;
* :mod:`.cells` formats one number (a score, an effect, a verdict) for both tables.
"""

from .cli import main
from .harness import run

__all__ = ["main", "run"]
