"""Write an :class:`agents.tournaments.stats.Evaluation` as Markdown, CSV, JSON and a PNG plot.

Every file is written atomically (``agents.tournaments.match.write_atomically``: a temporary file in the same
folder, then ``os.replace``), so a reader never sees half a report.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from typing import Any

from agents.files import write_atomically
from agents.tournaments.records import Interval
from agents.tournaments.stats import Evaluation


def _ci(interval: Interval | None, digits: int = 3, sign: bool = False) -> str:
    if interval is None:
        return "n/a"
    form = f"{{:{'+' if sign else ''}.{digits}f}}"
    return f"{form.format(interval.value)} [{form.format(interval.low)}, {form.format(interval.high)}]"


def _effect(value: float | None) -> str:
    if value is None:
        return "n/a"
    removed = round(100 * (1 - value))
    return f"{value:.2f} ({removed}% removed)" if removed > 0 else f"{value:.2f} (none removed)"


def markdown(evaluation: Evaluation) -> str:
    """The human report."""
    e = evaluation
    lines = [f"# Evaluation: {e.game}", ""]
    if e.command:
        lines += ["Made with:", "", "```bash", e.command, "```", ""]
    config = json.dumps(e.config) if e.config else "defaults"
    lines += [
        f"- game options: {config}; {e.seats} seats; seed {e.seed}",
        f"- agents: {', '.join(f'`{a.label}`' + (f' ({a.spec})' if a.spec != a.label else '') for a in e.agents)}",
        f"- design: {len(e.lineups)} lineup(s) x {len(e.seatings)} seatings (Williams design) = "
        f"{e.games_per_deal} games per deal; {e.deals_played} of {e.deals_planned} planned deals played, "
        f"{e.games} games, {e.mean_decisions:.1f} decisions a game, {e.truncated_games} truncated",
        f"- duplicate check: every game of a deal started from the identical state (cards and generator): "
        f"**{'yes' if e.same_start_per_deal else 'NO'}** ({e.distinct_deals} distinct deals)",
        "",
    ]
    if e.failures:
        lines += ["## Agent failures", "",
                  "These lineups stopped at the deal shown; their earlier deals are kept, every other lineup "
                  "played on. Statistics below cover the games played.", ""]
        for f in e.failures:
            lines += [f"- **{f.label}** ({f.spec}) in seat player_{f.seat}, deal {f.deal}, lineup "
                      f"{' '.join(e.lineups[f.lineup])}, seating {f.permutation}: action {f.action}: {f.reason}",
                      "", "```", f.table, "```", ""]
    lines += [
        "## Agents", "",
        "Win: among the game's winners (shared wins count); Wilson 95% interval over the agent's seats. "
        "Return and score (the game's own points): mean over the agent's seats, 95% bootstrap interval "
        "resampling deals. Fair share with equal strength: about 1/seats.", "",
        "| agent | seats played | win rate [95% CI] | fair share | shared wins | mean return [95% CI] | "
        "mean score [95% CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for a in e.agents:
        lines.append(f"| {a.label} | {a.games} | {_ci(a.win_rate)} | {1 / e.seats:.3f} | {a.shared_wins} | "
                     f"{_ci(a.mean_return, sign=True)} | {_ci(a.mean_score, 2)} |")
    lines += ["", "## Ratings (openskill Plackett-Luce)", "",
              "Every game is a ranking of its seats (winners first, then by return), games in a seeded random "
              "order; tau = 0 (fixed agents). "
              "95% interval mu +- 1.96 sigma; ordinal = mu - 3 sigma.", "",
              "| rank | agent | mu | sigma | 95% interval | ordinal |", "|---|---|---|---|---|---|"]
    for rank, r in enumerate(e.ratings, 1):
        lines.append(f"| {rank} | {r.label} | {r.mu:.2f} | {r.sigma:.2f} | [{r.low:.2f}, {r.high:.2f}] | "
                     f"{r.ordinal:.2f} |")
    lines += ["", "## Head-to-head", "",
              "Row agent's score against the column agent over every pair of seats they held in one game "
              "(placed better 1, same placing 1/2, worse 0), 95% bootstrap interval over deals.", ""]
    labels = [a.label for a in e.agents]
    lines += ["| vs | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    pairs = {(h.agent, h.opponent): h for h in e.head_to_head}
    for row in labels:
        cells = [_ci(pairs[row, col].score) if (row, col) in pairs else "-" for col in labels]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    lines += ["", "## Variance removed by duplicate deals", "",
              "Design effect = m x Var(per-deal mean) / Var(per-game value), m = games per deal (a game's value: "
              "the mean over the agent's seats, or over the pair's pairs of seats): the variance of "
              "the duplicate-deal estimate relative to plain seat rotation with a fresh deal every game (1: no "
              "gain; 0.5: half the variance removed, as good as twice the games). Per pair: the deal replayed in "
              "permuted seats. Per agent: pooled over its lineups, where playing one deal against several "
              "opponents also correlates its results positively, which can offset the gain.", "",
              "| pair | comparisons | head-to-head score: design effect (variance removed) |", "|---|---|---|"]
    for h in e.head_to_head:
        if labels.index(h.agent) < labels.index(h.opponent):
            lines.append(f"| {h.agent} vs {h.opponent} | {h.comparisons} | {_effect(h.design_effect)} |")
    lines += ["", "| agent | return: design effect (variance removed) | win: design effect |", "|---|---|---|"]
    for a in e.agents:
        lines.append(f"| {a.label} | {_effect(a.return_design_effect)} | {_effect(a.win_design_effect)} |")
    lines += ["", "## Seats", "", "All agents together: the seat advantage that rotation cancels.", "",
              "| seat | games | win rate [95% CI] | mean return |", "|---|---|---|---|"]
    for s in e.seat_stats:
        lines.append(f"| player_{s.seat} | {s.games} | {_ci(s.win_rate)} | {s.mean_return:+.3f} |")
    if e.sprt is not None:
        t = e.sprt
        first, second = labels[0], labels[1]
        meaning = {"H1": f"H1 accepted: {first} is stronger than {second} (elo >= {t.elo1:g} favoured over "
                         f"elo <= {t.elo0:g})",
                   "H0": f"H0 accepted: {first} is not {t.elo1:g} elo stronger than {second} (elo <= {t.elo0:g} "
                         f"favoured over elo >= {t.elo1:g})",
                   "inconclusive": "inconclusive: the game cap was reached first",
                   "stopped": "stopped: an agent failure ended the test"}[t.verdict]
        lines += ["", "## Sequential test (GSPRT)", "",
                  f"H0: elo <= {t.elo0:g}, H1: elo >= {t.elo1:g} ({first} over {second}, logistic elo); "
                  f"alpha {t.alpha:g}, beta {t.beta:g}. Outcome per deal: {first}'s mean head-to-head score "
                  f"(pentanomial for two seats).", "",
                  f"- **{meaning}**",
                  f"- after {t.deals} deals ({t.games} games); LLR {t.llr:.3f}, "
                  f"bounds [{t.lower:.3f}, {t.upper:.3f}]",
                  f"- {first}'s score {t.score:.3f}, elo {_ci(t.elo, 1, sign=True)}"]
        if len(t.outcomes) == 5:
            lines.append(f"- pentanomial (deals by {first}'s points in the pair 0, 1/2, 1, 3/2, 2): {t.outcomes}")
    return "\n".join(lines) + "\n"


def csv_text(evaluation: Evaluation) -> str:
    """One row per agent."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["game", "agent", "spec", "seats_played", "wins", "shared_wins", "win_rate", "win_low",
                     "win_high", "mean_return", "return_low", "return_high", "mean_score", "score_low",
                     "score_high", "rating_mu", "rating_sigma", "return_design_effect", "win_design_effect"])
    for a in evaluation.agents:
        rating = evaluation.rating(a.label)
        score = a.mean_score
        writer.writerow([evaluation.game, a.label, a.spec, a.games, a.wins, a.shared_wins,
                         *_numbers(a.win_rate), *_numbers(a.mean_return),
                         *(_numbers(score) if score else ["", "", ""]), f"{rating.mu:.4f}", f"{rating.sigma:.4f}",
                         _number(a.return_design_effect), _number(a.win_design_effect)])
    return buffer.getvalue()


def _numbers(interval: Interval) -> list[str]:
    return [_number(interval.value), _number(interval.low), _number(interval.high)]


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.6g}"


def json_text(evaluation: Evaluation) -> str:
    return json.dumps(_finite(dataclasses.asdict(evaluation)), indent=2) + "\n"


def _finite(value: Any) -> Any:
    """JSON has no infinities: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def plot_png(evaluation: Evaluation, path: str) -> None:
    """Ratings with 95% error bars, and the head-to-head score matrix as a heat map."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels = [a.label for a in evaluation.agents]
    n = len(labels)
    figure, (left, right) = plt.subplots(1, 2, figsize=(7 + 1.1 * n, 1.5 + 0.8 * max(n, 3)),
                                         gridspec_kw={"width_ratios": [1, 1.2]})
    ratings = evaluation.ratings[::-1]  # best on top
    y = np.arange(len(ratings))
    left.errorbar([r.mu for r in ratings], y, xerr=[[1.96 * r.sigma for r in ratings]] * 2, fmt="o", capsize=4)
    left.set_yticks(y, [r.label for r in ratings])
    left.set_xlabel("openskill mu (95% interval)")
    left.set_title("Ratings (Plackett-Luce)")
    left.grid(axis="x", alpha=0.3)
    draw_head_to_head(figure, right, labels, {(h.agent, h.opponent): h.score.value for h in evaluation.head_to_head})
    figure.suptitle(f"{evaluation.game}: {evaluation.games} games, {evaluation.seats} seats")
    save_figure(figure, path, dpi=110)


def draw_head_to_head(figure: Any, axis: Any, labels: list[str], scores: dict[tuple[str, str], float]) -> None:
    """The head-to-head matrix (``scores[row, column]``: the row agent's score) as a heat map on ``axis``."""
    import numpy as np

    n = len(labels)
    matrix = np.full((n, n), np.nan)
    for (row, column), value in scores.items():
        matrix[labels.index(row), labels.index(column)] = value
    image = axis.imshow(matrix, cmap="RdBu", vmin=0, vmax=1)
    for i in range(n):
        for j in range(n):
            if not np.isnan(matrix[i, j]):
                axis.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=8 if n > 6 else None,
                          color="white" if abs(matrix[i, j] - 0.5) > 0.3 else "black")
    axis.set_xticks(range(n), labels, rotation=30, ha="right")
    axis.set_yticks(range(n), labels)
    axis.set_title("Head-to-head score (row vs column)")
    figure.colorbar(image, ax=axis, fraction=0.046)


def save_figure(figure: Any, path: str, *, dpi: int) -> None:
    """Lay out, render to PNG and write atomically; the figure is closed."""
    import matplotlib.pyplot as plt

    figure.tight_layout()
    image = io.BytesIO()
    try:
        figure.savefig(image, format="png", dpi=dpi)
    finally:
        plt.close(figure)
    write_atomically(path, image.getvalue())


def write_all(evaluation: Evaluation, prefix: str) -> list[str]:
    """``prefix``.md/.csv/.json/.png; returns the paths."""
    paths = [prefix + suffix for suffix in (".md", ".csv", ".json", ".png")]
    write_atomically(paths[0], markdown(evaluation))
    write_atomically(paths[1], csv_text(evaluation))
    write_atomically(paths[2], json_text(evaluation))
    plot_png(evaluation, paths[3])
    return paths
