"""The typed library: ``card_envs`` (which ships ``py.typed``) passes mypy under the project's ``[tool.mypy]``.

One mypy run checks the package and, beside it, a probe of deliberate type errors written against the package:
the package must report no error, and every error the probe marks (``# expect: <code>``) must be reported, so
the check is shown to see errors in code that uses ``card_envs`` under the same settings (a run that checked
nothing, or an ``Any`` where the package's types should be, would miss them).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: each marked line must draw an error with that code; nothing else in the probe may
PROBE = '''\
import card_envs
from card_envs.core.engine import GameState


def seat_of(state: GameState | None) -> int:
    return state.current_player  # expect: union-attr


def untyped(value):  # expect: no-untyped-def
    return value


card_envs.make_game(3)  # expect: arg-type
card_envs.make_game("revolution_v0").deal_cards()  # expect: attr-defined
silenced: int = "one"  # type: ignore  # expect: ignore-without-code
needless: int = 1  # type: ignore[assignment]  # expect: unused-ignore
'''

_ERROR = re.compile(r"^(?P<path>.+?):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")
_CHECKED = re.compile(r"checked (\d+) source files?")


def test_card_envs_passes_mypy(tmp_path: Path) -> None:
    probe = tmp_path / "typing_probe.py"
    probe.write_text(PROBE)
    done = subprocess.run([sys.executable, "-m", "mypy", "card_envs", str(probe)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, check=False)
    output = done.stdout + done.stderr
    errors = [match for match in map(_ERROR.match, done.stdout.splitlines()) if match]
    assert done.returncode == 1, f"mypy should report the probe's errors and no crash (exit 1):\n{output}"

    in_package = [m.group(0) for m in errors if Path(m["path"]).name != probe.name]
    assert not in_package, "card_envs has type errors:\n" + "\n".join(in_package)

    expected = {(number, line.rsplit("# expect: ", 1)[1]) for number, line in enumerate(PROBE.splitlines(), 1)
                if "# expect: " in line}
    reported = {(int(m["line"]), m["code"]) for m in errors}
    assert reported == expected, f"the probe's errors, expected {sorted(expected)}:\n{output}"

    modules = len(list((ROOT / "card_envs").rglob("*.py")))
    checked = _CHECKED.search(output)
    assert checked and int(checked.group(1)) == modules + 1, f"mypy should check all {modules} modules:\n{output}"
