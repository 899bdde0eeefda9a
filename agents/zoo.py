"""``python -m agents.zoo`` (or ``card-envs zoo``): the shipped agents, :mod:`agents.players.zoo`, where this module
now lives (its command line: :mod:`agents.players.zoo.cli`).

The name stays so that the command and old imports (``from agents.zoo import ...``) keep working; it is the same
module object, not a copy.
"""

import sys

if __name__ == "__main__":
    from card_envs.core.commands import run_main

    raise SystemExit(run_main("agents.players.zoo.cli", "python -m agents.zoo"))

from agents.players import zoo

sys.modules[__name__] = zoo
