"""``card-envs evaluate`` (or ``card-envs evaluate``): :mod:`agents.tournaments.evaluate`, where this module now lives.

The name stays so that the command and old imports (``from agents.evaluate import ...``) keep working; it is the same
module object, not a copy.
"""

import sys

from agents.tournaments import evaluate

if __name__ == "__main__":
    raise SystemExit(evaluate.main())
sys.modules[__name__] = evaluate
