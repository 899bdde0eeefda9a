"""The web table in a real headless Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright).

For every game a whole game against the strongest rule-based player is played by clicking legal
buttons to the end; the result must show, and a screenshot of the table is saved as a test artifact
(``build/test-artifacts/play/<game>.png``, or under ``$PLAY_ARTIFACTS``). Every response the server
sent during the game is scanned for a card the person's seat may not see, using the independent
oracle of :mod:`tests.play_helpers`. Watch mode and opening a saved game are driven too.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the play table needs the extra 'play'")
playwright = pytest.importorskip("playwright.sync_api", reason="the browser tests need the extra 'play-test'")

from fastapi import Request, Response  # noqa: E402

import card_envs  # noqa: E402
from agents.play.server import STATIC, Setup, bind, create_app, make_server, url_of  # noqa: E402
from agents.players.registry import strongest_heuristic  # noqa: E402
from tests.play_helpers import QUICK_CONFIGS, SeenSoFar, check_payload, replay_states  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
#: the flags that work on these machines (no network but loopback, root, no GPU)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("PLAY_ARTIFACTS", Path(__file__).resolve().parents[1] / "build" / "test-artifacts"
                                / "play"))
#: (seat of the person, seed) per game: every seat kind gets a turn across the games
SEATS = {"revolutionary_war_v0": (1, 3), "bloodlines_v0": (0, 4), "revolution_v0": (2, 5), "battlecards_v0": (0, 6)}
#: shorter still than the table tests' configs: a game in a browser should take seconds
CONFIGS = {**QUICK_CONFIGS, "bloodlines_v0": {"max_turns": 30}, "battlecards_v0": {"max_rounds": 15, "num_players": 3}}

if not os.path.exists(CHROMIUM):  # a failure, not a skip: the README's test command (.ci/setup) installs it
    raise RuntimeError(f"{CHROMIUM} is missing: bash .ci/setup installs Debian's chromium for these tests")


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@contextmanager
def served(setup: Setup):
    """The app on a free loopback port in a thread; every response it sends is recorded."""
    app = create_app(setup)
    sent: list[tuple[str, int, bytes]] = []

    @app.middleware("http")
    async def record(request: Request, call_next):
        response = await call_next(request)
        body = b"".join([chunk async for chunk in response.body_iterator])
        sent.append((request.url.path, response.status_code, body))
        return Response(body, status_code=response.status_code, headers=dict(response.headers))

    sock = bind("127.0.0.1", 0)
    server = make_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield url_of(sock), app, sent
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


def wait_for_decision(page) -> str:
    page.wait_for_selector("body[data-phase='act'], body[data-phase='over']", timeout=30_000)
    return page.get_attribute("body", "data-phase")


def click_to_the_end(page, rng: random.Random, limit: int = 2000) -> int:
    for clicks in range(limit):
        if wait_for_decision(page) == "over":
            return clicks
        buttons = page.locator("#moves button.move")
        buttons.nth(rng.randrange(buttons.count())).click()
    raise AssertionError("the game did not end")


def scan(sent, final_state, deal_seed: int, seat: int, name: str) -> int:
    """Every response: static files are the files on disk; every JSON payload shows only what ``seat``
    may see of the game that ended in ``final_state``."""
    oracle = SeenSoFar(replay_states(final_state, deal_seed), seat)
    everything_seen = oracle.cumulative[-1]
    checked = 0
    for path, status, body in sent:
        if path == "/" or path.startswith("/static/"):
            on_disk = (STATIC / ("index.html" if path == "/" else path.rsplit("/", 1)[-1])).read_bytes()
            assert status == 200 and body == on_disk, path
            continue
        payload = json.loads(body)
        if "decisions" in payload:
            k = payload["decisions"]
            check_payload(payload, name, oracle.visible[k], oracle.cumulative[k])
        else:  # the session, or an error message
            check_payload(payload, name, set(), everything_seen)
        checked += 1
    return checked


@pytest.mark.parametrize("name", card_envs.ENV_NAMES)
def test_a_whole_game_by_clicking_legal_buttons(browser, name):
    seat, seed = SEATS[name]
    setup = Setup(game=name, config=CONFIGS[name], seat=seat, opponents=[strongest_heuristic(name)], seed=seed,
                  delay_ms=0)
    with served(setup) as (url, app, sent):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url)
        clicks = click_to_the_end(page, random.Random(seed))
        (table,) = app.state.tables._tables.values()
        states = replay_states(table.state, table.deal_seed)
        assert table.state.is_over and clicks == sum(s.current_player == seat for s in states[:-1])
        result = page.locator("#result")
        assert result.is_visible() and result.inner_text().startswith("Result: ")
        assert table.snapshot()["result"]["text"] in result.inner_text()
        assert page.locator(f".seat.you[data-seat='{seat}']").count() == 1
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        game_over = len(sent)
        assert scan(sent[:game_over], table.state, table.deal_seed, seat, name) >= clicks
        if name == "revolutionary_war_v0":
            _same_deal_and_swap(page, table)
            start = table.state.clone()  # the same deal, not played yet: each new deal's responses
            for response in sent[game_over:]:
                viewer = json.loads(response[2])["seat"]
                assert scan([response], start, table.deal_seed, viewer, name) == 1
        page.close()
        assert not errors, errors


def _same_deal_and_swap(page, table) -> None:
    """The buttons: same deal again keeps the seat and the cards; swap seats moves the person on."""
    first_hand = sorted(page.locator(".seat.you .card").evaluate_all("cards => cards.map(c => c.dataset.card)"))
    page.click("#same-deal")
    page.wait_for_function("document.querySelector('#log').children.length <= 2")
    assert table.seat == 1 and not table.state.history
    page.click("#swap-seats")
    page.wait_for_selector(".seat.you[data-seat='0']")
    assert table.seat == 0
    assert first_hand  # the person's cards were drawn face up


def test_watching_and_replaying_in_the_browser(browser, tmp_path):
    name = "bloodlines_v0"
    setup = Setup(game=name, config={"max_turns": 24}, mode="watch",
                  watch=["heuristic:defender", "heuristic:aggressor"], seed=2)
    with served(setup) as (url, app, _sent):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url)
        page.wait_for_selector("body[data-phase='watch']")
        page.click("#step")
        page.wait_for_selector("body[data-frame='1']")
        page.click("#back")
        page.wait_for_selector("body[data-frame='0']")
        page.select_option("#perspective", "1")  # one seat's view: the other hand is face down
        page.wait_for_function("document.querySelectorAll(\".seat[data-seat='0'] .card.back\").length > 0")
        assert page.locator(".seat[data-seat='1'] .zone:has-text('hand') .card.back").count() == 0
        page.select_option("#perspective", "all")
        page.wait_for_function("document.querySelectorAll(\".seat[data-seat='0'] .zone .card.back\").length === 1")
        page.select_option("#speed", "50")
        page.click("#play-pause")
        page.wait_for_selector("body[data-phase='over']", timeout=60_000)
        assert page.locator("#result").inner_text().startswith("Result: ")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "watch_bloodlines_v0.png"), full_page=True)
        (watched,) = app.state.tables._tables.values()
        with page.expect_download() as download:
            page.click("#download")
        saved = tmp_path / "watched.json"
        download.value.save_as(saved)
        assert json.loads(saved.read_text()) == watched.saved_game()  # seeds intact: 64-bit, no float rounding
        page.set_input_files("#open-saved", str(saved))  # opens the saved game as a replay
        page.wait_for_function("document.querySelector('#mode').textContent.includes('replay')"
                               " || document.querySelector('#error').textContent")
        assert page.locator("#error").inner_text() == ""
        page.select_option("#speed", "50")
        page.click("#play-pause")
        page.wait_for_selector("body[data-phase='over']", timeout=60_000)
        final = watched.frame(len(watched.actions))["result"]["text"]
        assert page.locator("#result").inner_text() == f"Result: {final}"
        page.close()
