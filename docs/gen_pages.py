"""Pages of the documentation site made at build time from what the code and the committed results already say
(run by the ``gen-files`` plugin of ``mkdocs.yml``), so that they cannot drift from it:

==========================  ===========================================================================================
``games/<game>.md``         the game's picture, its env docstring (options, actions, rewards, rendering, version
                            history) and its observation layout (the encoding's docstring), both turned from the
                            docstrings' reStructuredText tables into Markdown; its rule-based players (``AGENTS``);
                            its ladder and placed zoo agents (``benchmarks/results/ladder_<game>.json``); its shipped
                            agents (the zoo manifests); its engines' rates (``benchmarks/results/*throughput.md``)
``games/rules/<game>.md``   the game's ``RULES.md``
``results/<name>.md``       the committed benchmark reports listed in :data:`RESULTS`, with their pictures
==========================  ===========================================================================================

``python docs/gen_pages.py OUT`` writes the same pages into the folder ``OUT`` (to read them without MkDocs).
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "benchmarks" / "results"

#: each game's title and module folder, in the order of the site's navigation
GAMES = {"revolutionary_war_v0": "Revolutionary War", "revolution_v0": "Revolution", "battlecards_v0": "Battlecards",
         "bloodlines_v0": "Bloodlines"}
#: the committed reports the site shows (their pictures come along)
RESULTS = ("jax_throughput", "throughput", "training_throughput", "headtohead_revolution_v0_jax_vs_sb3",
           "ladder_revolutionary_war_v0", "ladder_revolution_v0", "ladder_battlecards_v0", "ladder_bloodlines_v0",
           "ismcts_strength", "openspiel_ismcts", "bloodlines_balance")


# -- reStructuredText docstrings to Markdown ------------------------------------------------------------------------


def _is_rule(line: str) -> bool:
    """A simple table's border: runs of '=' separated by spaces (at least two columns)."""
    return bool(re.fullmatch(r"=+( +=+)+ *", line))


def _columns(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"=+", rule)]


def _cells(line: str, columns: list[tuple[int, int]]) -> list[str]:
    """A row's cells; the last column takes the rest of the line."""
    cells = []
    for index, (start, _) in enumerate(columns):
        stop = len(line) if index == len(columns) - 1 else columns[index + 1][0]
        cells.append(line[start:stop].strip())
    return cells


def _markdown_table(lines: list[str]) -> list[str]:
    """An RST simple table (border, [header, border,] rows, border) as a Markdown table; a row whose first cell is
    empty continues the row above."""
    columns = _columns(lines[0])
    body = [line for line in lines[1:] if line.strip()]
    borders = [i for i, line in enumerate(body) if _is_rule(line)]
    header: list[str] = [""] * len(columns)
    if len(borders) >= 2:  # border, header, border, rows, border
        header = _cells(body[0], columns)
        body = body[borders[0] + 1:]
    rows: list[list[str]] = []
    for line in body:
        if _is_rule(line):
            continue
        cells = _cells(line, columns)
        if rows and not cells[0]:
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(_inline(cell).replace("|", "\\|") for cell in cells) + " |"

    return [row(header), "|" + "---|" * len(columns), *map(row, rows)]


def _inline(text: str) -> str:
    """``code`` -> `code`; :role:`~a.b.name` -> `name`."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", lambda m: f"`{m.group(1).split('.')[-1]}`", text)
    return re.sub(r"``(.+?)``", r"`\1`", text)


def rst_to_markdown(text: str, heading: str = "###") -> str:
    """A docstring's simple tables, section titles (underlined with '-' or '=') and inline literals in Markdown."""
    lines = text.strip("\n").splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _is_rule(line):
            end = i + 1
            rules = 1
            while end < len(lines) and rules < 3:
                if _is_rule(lines[end]):
                    rules += 1
                    if rules == 2 and end + 1 < len(lines) and not _has_rule_before_blank(lines, end + 1):
                        break  # a table without a header: border, rows, border
                end += 1
            out += ["", *_markdown_table(lines[i:end + 1]), ""]
            i = end + 1
            continue
        underline = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and re.fullmatch(r"[-=~]{3,}", underline) and len(underline) >= len(line.strip()):
            out += ["", f"{heading} {_inline(line.strip())}", ""]
            i += 2
            continue
        out.append(_inline(line))
        i += 1
    return "\n".join(out).strip() + "\n"


def _has_rule_before_blank(lines: list[str], start: int) -> bool:
    """Whether another border follows (before the table ends at a blank line): the table had a header."""
    for line in lines[start:]:
        if _is_rule(line):
            return True
        if not line.strip():
            return False
    return False


# -- the game pages --------------------------------------------------------------------------------------------------


def _table_rows(report: str, game: str) -> list[str]:
    """The first Markdown table of a committed report, cut to its header and the rows naming ``game``."""
    lines = (RESULTS_DIR / f"{report}.md").read_text().splitlines()
    table = [line for line in lines if line.startswith("|")]
    if len(table) < 3:
        return []
    header, rule = table[0], table[1]
    rows = [line for line in table[2:] if line.split("|")[1].strip().startswith(game)]
    end = next((i for i, line in enumerate(lines) if i > lines.index(header) and not line.startswith("|")), None)
    first_table = set(lines[lines.index(header):end])
    return [header, rule, *[row for row in rows if row in first_table]]


def _baselines(game: str) -> list[str]:
    module = importlib.import_module(f"agents.players.{game.rsplit('_v', 1)[0]}")
    rows = ["| spec | the player |", "|---|---|"]
    for name, player in module.AGENTS.items():
        first = (player.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        strongest = " **(the strongest)**" if name == module.STRONGEST else ""
        rows.append(f"| `heuristic:{name}`{strongest} | {_inline(first)} |")
    return rows


def _ladder(game: str) -> list[str]:
    from agents.tournaments.ladder import compact_table, load_ladder, placed_table

    path = RESULTS_DIR / f"ladder_{game}.json"
    if not path.exists():
        return ["No published ladder yet."]
    document = load_ladder(game)
    text = compact_table(document).replace(f"benchmarks/results/ladder_{game}.md", f"../results/ladder_{game}.md")
    placed = placed_table(document)
    return [text, *([placed] if placed else [])]


def _zoo(game: str) -> list[str]:
    from agents.players.zoo import entries

    found = entries(game)
    if not found:
        return ["No shipped agent yet."]
    from agents.players.zoo import describe

    rows = ["| spec | trainer | decisions | wall time (min) | ladder Elo [95% CI] |", "|---|---|---:|---:|---|"]
    for entry in found:
        row = describe(entry)
        elo = (entry.ladder or {}).get("elo")
        rating = f"{elo['value']:+.0f} [{elo['low']:+.0f}, {elo['high']:+.0f}]" if elo else "-"
        rows.append(f"| `{entry.spec}` | {entry.training.get('trainer', '-')} | {row['decisions'] or 0:,} | "
                    f"{row['wall_time_min']} | {rating} |")
    return rows


def game_page(game: str) -> str:
    """The page of one game (see the module docstring)."""
    env_module = importlib.import_module(f"card_envs.{game.rsplit('_v', 1)[0]}.env")
    import card_envs

    engine = card_envs.make_game(game)
    intro, _, rest = (env_module.__doc__ or "").partition("\n\n")
    summary, _, details = rest.partition("\n\n")
    title = GAMES[game]
    parts = [
        f"# {title} (`{game}`)", "",
        f"![{title}: a game of shipped agents, every hand face up](../images/{game}.gif)", "",
        _inline(summary.replace("Full rules:", "Full rules: [the rules as implemented](rules/" + game + ".md),")), "",
        f"```python\nfrom card_envs import {game}\nenv = {game}.env()\n```", "",
        "## The environment", "", rst_to_markdown(details), "",
        "## Observation", "", rst_to_markdown(engine.encoding_doc(), heading="###"), "",
        "## Baselines", "", *_baselines(game), "",
        "## Ladder", "", *_ladder(game), "",
        "## Shipped agents (`zoo:`)", "", *_zoo(game), "",
        "## Engine rates", "",
        "Batched JAX engine against the Python engine (decisions a second; "
        "[full report](../results/jax_throughput.md)):", "", *_table_rows("jax_throughput", game), "",
        "The Python engine and the PettingZoo env ([full report](../results/throughput.md)):", "",
        *_table_rows("throughput", game), "",
    ]
    return "\n".join(parts)


def _rules_page(game: str) -> str:
    text = (ROOT / "card_envs" / game.rsplit("_v", 1)[0] / "RULES.md").read_text()
    return re.sub(r"\]\((?!https?:)([^)#]+)\)", r"](\1)", text)


def _result_page(name: str) -> str:
    text = (RESULTS_DIR / f"{name}.md").read_text()
    # links to the repository's files are not pages of the site: keep their names as code
    return re.sub(r"\[([^\]]+)\]\((?!https?:|[\w.-]+\.(?:md|png)\b)([^)]+)\)", r"\1 (`\2`)", text)


def pages() -> Iterator[tuple[str, str | bytes]]:
    """(path under docs/, content) of every generated page and picture."""
    for game in GAMES:
        yield f"games/{game}.md", game_page(game)
        yield f"games/rules/{game}.md", _rules_page(game)
    for name in RESULTS:
        yield f"results/{name}.md", _result_page(name)
        for picture in RESULTS_DIR.glob(f"{name}*.png"):
            yield f"results/{picture.name}", picture.read_bytes()


def write_all(open_file: Callable[..., object]) -> None:
    for path, content in pages():
        mode = "wb" if isinstance(content, bytes) else "w"
        with open_file(path, mode) as handle:  # type: ignore[attr-defined]
            handle.write(content)


def _main() -> None:
    if __name__ == "__main__" and len(sys.argv) == 2:  # plain script: write into a folder
        out = Path(sys.argv[1])

        def open_file(path: str, mode: str):  # noqa: ANN202
            (out / path).parent.mkdir(parents=True, exist_ok=True)
            return open(out / path, mode)

        write_all(open_file)
        return
    import mkdocs_gen_files

    write_all(mkdocs_gen_files.open)


_main()
