"""``python -m agents.evaluate`` (or ``card-envs evaluate``): :mod:`agents.tournaments.evaluate`, where this module
now lives.

The name stays so that the command and old imports (``from agents.evaluate import ...``) keep working; it is the same
module object, not a copy.
"""

import sys

if __name__ == "__main__":
    from card_envs.core.commands import run_main

    raise SystemExit(run_main("agents.tournaments.evaluate", "python -m agents.evaluate"))

from agents.tournaments import evaluate

sys.modules[__name__] = evaluate
