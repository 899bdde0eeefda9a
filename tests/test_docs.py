"""The documentation: the site builds with ``mkdocs build --strict`` (a broken link, a missing page or a failed
reference fails), opens in Debian's headless Chromium with every game's picture and a working search, every Python
block of the README and of docs/ runs, and the README stays short.

A Python block that cannot run here is preceded by ``<!-- no-run: <why> -->``.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MKDOCS = Path(sys.executable).with_name("mkdocs")
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
GAMES = ("revolutionary_war_v0", "revolution_v0", "battlecards_v0", "bloodlines_v0")
SCREENSHOTS = Path(os.environ.get("DOCS_ARTIFACTS", ROOT / "build" / "test-artifacts" / "docs"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    done = subprocess.run([str(MKDOCS), "build", "--strict", "--site-dir", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_the_site_builds_strict_with_a_page_per_game(site: Path) -> None:
    for game in GAMES:
        page = (site / "games" / game / "index.html").read_text()
        assert f"{game}.gif" in page and "action_mask" in page  # its picture and its spaces, from the docstring
        assert "Ladder" in page and "heuristic:" in page
    assert (site / "reference" / "card_envs" / "index.html").exists()


@pytest.fixture(scope="module")
def served(site: Path):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(10)


def _pictures_loaded(page) -> list[int]:  # noqa: ANN001 (playwright's Page)
    return page.eval_on_selector_all("article img", "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)")


def test_the_site_shows_every_game_and_finds_action_mask(served: str) -> None:
    playwright = pytest.importorskip("playwright.sync_api", reason="the browser tests need the extra 'play-test'")
    assert os.path.exists(CHROMIUM), "bash .ci/setup installs Debian's chromium"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(served + "/", wait_until="load")
        widths = _pictures_loaded(page)
        assert len(widths) >= 4 and all(w > 0 for w in widths), widths
        page.screenshot(path=str(SCREENSHOTS / "home.png"), full_page=True)
        for game in GAMES:
            page.goto(f"{served}/games/{game}/", wait_until="load")
            widths = _pictures_loaded(page)
            assert widths and all(w > 0 for w in widths), (game, widths)
        page.screenshot(path=str(SCREENSHOTS / "game.png"))
        page.goto(served + "/?q=action+mask", wait_until="load")  # Material opens its search with ?q=
        page.wait_for_selector(".md-search-result__item", timeout=30_000)
        meta = page.inner_text(".md-search-result__meta")
        assert re.match(r"\d+ matching documents?", meta) and not meta.startswith("0 "), meta
        page.screenshot(path=str(SCREENSHOTS / "search.png"))
        browser.close()


# -- code blocks ----------------------------------------------------------------------------------------------------


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """(line, code) of every ```python block not marked ``<!-- no-run: ... -->`` on the line before it."""
    lines = path.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            end = next(j for j in range(start, len(lines)) if lines[j].strip() == "```")
            marked = i > 0 and lines[i - 1].strip().startswith("<!-- no-run:")
            if not marked:
                blocks.append((start + 1, "\n".join(lines[start:end])))
            i = end
        i += 1
    return blocks


DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=[str(p.relative_to(ROOT)) for p in DOCUMENTS])
def test_every_python_block_runs(document: Path, tmp_path: Path) -> None:
    """The blocks of one document run in order in one fresh interpreter, as a reader would paste them."""
    blocks = python_blocks(document)
    if not blocks:
        return
    script = "\n".join(f"# {document.name}, line {line}\n{code}\n" for line, code in blocks)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False, env={**os.environ, "MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr[-4000:]


def test_a_no_run_mark_says_why() -> None:
    for document in DOCUMENTS:
        for reason in re.findall(r"<!-- no-run:(.*?)-->", document.read_text()):
            assert len(reason.strip()) > 10, (document, reason)


def test_the_readme_reads_in_five_minutes() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150
