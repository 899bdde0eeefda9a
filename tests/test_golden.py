"""Replay the committed golden playthroughs (tests/golden/) and diff them: behaviour changes must be deliberate."""

from __future__ import annotations

import difflib

import pytest

import card_envs
from tests.golden import golden_cases, trace, trace_path

CASES = [(name, index, config, seed) for name in card_envs.ENV_NAMES for index, config, seed in golden_cases(name)]


@pytest.mark.parametrize("name,index,config,seed", CASES, ids=[f"{c[0]}-cfg{c[1]}-seed{c[3]}" for c in CASES])
def test_golden_playthrough(name, index, config, seed):
    path = trace_path(name, index, seed)
    assert path.exists(), f"missing golden trace {path}: run `python -m tests.golden --update {name}` and commit it"
    expected = path.read_text()
    actual = trace(name, config, seed)
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(path), "now", n=2))
        pytest.fail(f"behaviour changed (bump the env version if deliberate, then update the trace):\n{diff[:4000]}")
