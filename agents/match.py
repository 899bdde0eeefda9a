"""``python -m agents.match`` (or ``card-envs match``): :mod:`agents.tournaments.match`, where this module now lives.

The name stays so that the command and old imports (``from agents.match import ...``) keep working; it is the same
module object, not a copy.
"""

import sys

if __name__ == "__main__":
    from card_envs.core.commands import run_main

    raise SystemExit(run_main("agents.tournaments.match", "python -m agents.match"))

from agents.tournaments import match

sys.modules[__name__] = match
