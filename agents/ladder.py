"""``python -m agents.ladder`` (or ``card-envs ladder``): :mod:`agents.tournaments.ladder`, where this module now lives.

The name stays so that the command and old imports (``from agents.ladder import ...``) keep working; it is the same
module object, not a copy.
"""

import sys

if __name__ == "__main__":
    from card_envs.core.commands import run_main

    raise SystemExit(run_main("agents.tournaments.ladder", "python -m agents.ladder"))

from agents.tournaments import ladder

sys.modules[__name__] = ladder
