"""Opt-in interoperability tests (``bash .ci/run-interop``), in their own venv ``.venv-interop``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests_interop.helpers without installing
