"""The terminal table (``card-envs play --ui terminal``): the same tables, drawn with rich.

For machines without a browser. It drives the same :class:`~agents.play.tables.PlayTable` and
:class:`~agents.play.tables.WatchTable` as the web page, so it shows the same seat's view, the same
log and the same legal moves, and the table checks every move the same way.

==================  ===============================================================================
when                type
==================  ===============================================================================
your turn           the move's number (``3``) or its name (``play 7``); ``?`` lists the moves again
game over           ``n`` new game, ``s`` same deal again, ``w`` swap seats, ``q`` quit (with
                    ``--save-games DIR`` every finished game is saved there)
watching            Enter: next decision, ``b`` back, ``p`` play to the end, ``v all`` / ``v 1``: all
                    hands / one seat's view, ``q`` quit
==================  ===============================================================================

:class:`TerminalTable` takes the console and the input function, so tests script a whole session.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.columns import Columns
from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from agents.play.tables import PlayTable, TableError, WatchTable

SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
LOG_LINES = 10


def card_text(item: dict[str, Any]) -> Text:
    """``[10♥]`` in red, ``[A♠]``, ``[JOKER]``, ``[▒▒]`` for a face-down card; tags after a colon."""
    code = item["c"]
    if code is None:
        text = Text("[▒▒]", style="blue")
    elif code.startswith("X"):
        text = Text(f"[{code}★]", style="bold magenta")
    else:
        suit = code[-1]
        text = Text(f"[{code[:-1]}{SUITS[suit]}]", style=("bold red" if suit in "DH" else "bold") +
                    (" reverse" if item.get("h") else ""))
    if item.get("t"):
        text.append(f"({item['t']})", style="dim")
    return text


def zone_text(zone: dict[str, Any]) -> Text:
    text = Text(f"{zone['label']}: ", style="green")
    for item in zone["cards"]:
        text.append_text(card_text(item))
        text.append(" ")
    if zone["pile"]:
        text.append(f"[▒▒ ×{zone['pile']}]", style="blue")
    if not zone["cards"] and not zone["pile"]:
        text.append("-", style="dim")
    if zone["note"]:
        text.append(f"  ({zone['note']})", style="dim")
    return text


def seat_panel(panel: dict[str, Any]) -> Panel:
    stats = " · ".join(f"{label} {value}" for label, value in panel["stats"])
    title = panel["name"] + ("  ● to act" if panel["to_act"] else "") + ("  (out)" if panel["out"] else "")
    body = Group(Text(stats, style="dim"), *(zone_text(z) for z in panel["zones"]))
    return Panel(body, title=title, title_align="left", border_style="yellow" if panel["to_act"] else "white")


def board_renderable(board: dict[str, Any], bottom: int) -> Group:
    seats = board["seats"]
    n = len(seats)
    info = Text(" · ".join(f"{label} {value}" for label, value in board["info"]), style="cyan")
    others = [seat_panel(seats[(bottom + k) % n]) for k in range(1, n)]
    center = Panel(Group(*(zone_text(z) for z in board["center"])) if board["center"] else Text(""),
                   title="table", title_align="left", border_style="green")
    parts: list[Any] = [Text(f"{board['title']} — {board['status']}", style="bold"), info,
                        Columns(others, expand=True) if len(others) > 1 else others[0]]
    if board["center"]:
        parts.append(center)
    parts.append(seat_panel(seats[bottom]))
    return Group(*parts)


class TerminalTable:
    """A session at the terminal. ``read(prompt)`` returns a line (``input`` by default); EOF quits."""

    def __init__(self, console: Console | None = None, read: Callable[[str], str] = input,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.console = console or Console()
        self.read = read
        self.sleep = sleep
        self.printed = 0  # log entries already printed

    def ask(self, prompt: str) -> str | None:
        try:
            return self.read(prompt).strip()
        except EOFError:
            return None

    def print_log(self, log: Sequence[dict[str, Any]], skipped: int, you: int | None) -> None:
        start = max(self.printed - skipped, 0)
        for entry in log[start:]:
            style = "yellow" if entry["seat"] is not None and entry["seat"] == you else ""
            self.console.print(("  · " if entry["seat"] is None else "» ") + entry["text"], style=style,
                               highlight=False)
        self.printed = skipped + len(log)

    # -- play ----------------------------------------------------------------------------------------

    def play(self, table: PlayTable) -> None:
        snap = table.snapshot()
        self.printed = 0
        while True:
            self.print_log(snap["log"], snap["log_skipped"], snap["seat"])
            if snap["over"]:
                self.console.print(board_renderable(snap["board"], snap["seat"]))
                self.console.print(f"Result: {snap['result']['text']}", style="bold yellow")
                choice = self.ask("n new game · s same deal again · w swap seats · q quit > ")
                kinds = {"n": "new", "s": "same", "w": "swap"}
                if choice is None or choice.lower() in ("q", "quit"):
                    return
                if choice.lower() in kinds:
                    snap = table.new_deal(snap["turn"], kinds[choice.lower()])
                    self.printed = 0
                    self.console.rule("new deal")
                continue
            if not snap["you_act"]:
                self.sleep(snap["delay_ms"] / 1000)
                snap = table.advance(snap["turn"])
                continue
            self.console.print(board_renderable(snap["board"], snap["seat"]))
            action = self.choose(snap["legal"])
            if action is None:
                return
            try:
                snap = table.move(snap["turn"], action)
            except TableError as error:
                self.console.print(f"refused: {error.message}", style="red")
                snap = table.snapshot()

    def choose(self, legal: Sequence[dict[str, Any]]) -> int | None:
        """The person's move: its number or its name; None to quit."""
        menu = "   ".join(f"{k}) {move['name']}" for k, move in enumerate(legal, start=1))
        self.console.print(Text(menu, style="bold yellow"))
        by_name = {move["name"].lower(): move["action"] for move in legal}
        while True:
            answer = self.ask("your move (number or name, q to quit) > ")
            if answer is None or answer.lower() in ("q", "quit"):
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(legal):
                return legal[int(answer) - 1]["action"]
            if answer.lower() in by_name:
                return by_name[answer.lower()]
            self.console.print(f"{answer!r} is not a move here; the moves are: " +
                               ", ".join(f"{k}) {m['name']}" for k, m in enumerate(legal, start=1)), style="red")

    # -- watch and replay ------------------------------------------------------------------------------

    def watch(self, table: WatchTable, delay: float = 0.7) -> None:
        view = "all"
        frame = 0
        auto = False
        while True:
            try:
                data = table.frame(frame, view)
            except TableError as error:
                self.console.print(error.message, style="red")
                frame = max(0, frame - 1)
                auto = False
                continue
            bottom = 0 if view == "all" else int(view)
            self.printed = 0
            self.print_log(data["log"][-LOG_LINES:], 0, None if view == "all" else bottom)
            self.console.print(board_renderable(data["board"], bottom))
            end = data["final_frame"]
            self.console.print(f"decision {frame}" + ("" if end is None else f" of {end}")
                               + (f" · next: {data['next_move']}" if data["next_move"] else ""), style="dim")
            if data["over"]:
                self.console.print(f"Result: {data['result']['text']}", style="bold yellow")
                auto = False
            if auto:
                self.sleep(delay)
                frame += 1
                continue
            answer = self.ask("Enter next · b back · p play to the end · v all / v K view · q quit > ")
            if answer is None or answer.lower() in ("q", "quit"):
                return
            if answer == "":
                frame = frame if data["over"] else frame + 1
            elif answer.lower() == "b":
                frame = max(0, frame - 1)
            elif answer.lower() == "p":
                auto = not data["over"]
            elif answer.lower().startswith("v"):
                wanted = answer[1:].strip() or "all"
                seats = len(data["names"])
                if wanted == "all" or (wanted.isdigit() and int(wanted) < seats):
                    view = wanted
                else:
                    self.console.print(f"view must be 'all' or a seat 0..{seats - 1}", style="red")
