"""``card-envs zoo`` (or ``card-envs zoo``): the shipped agents, :mod:`agents.players.zoo`, where this module
now lives (its command line: :mod:`agents.players.zoo.cli`).

The name stays so that the command and old imports (``from agents.zoo import ...``) keep working; it is the same
module object, not a copy.
"""

import sys

from agents.players import zoo

if __name__ == "__main__":
    from agents.players.zoo.cli import main

    raise SystemExit(main())
sys.modules[__name__] = zoo
