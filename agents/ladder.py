"""``card-envs ladder`` (or ``card-envs ladder``): :mod:`agents.tournaments.ladder`, where this module now lives.

The name stays so that the command and old imports (``from agents.ladder import ...``) keep working; it is the same
module object, not a copy.
"""

import sys

from agents.tournaments import ladder

if __name__ == "__main__":
    raise SystemExit(ladder.main())
sys.modules[__name__] = ladder
