"""``card-envs match`` (or ``card-envs match``): :mod:`agents.tournaments.match`, where this module now lives.

The name stays so that the command and old imports (``from agents.match import ...``) keep working; it is the same
module object, not a copy.
"""

import sys

from agents.tournaments import match

if __name__ == "__main__":
    raise SystemExit(match.main())
sys.modules[__name__] = match
