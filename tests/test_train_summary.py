"""The training summary table: every outcome of the final evaluation is accounted for."""

from agents.tournaments.match import ContestResult
from train.config import config_from_dict
from train.trainer import Summary


def test_summary_row_splits_wins_field_wins_and_games_without_a_winner():
    # a 2-player game where 1 in 10 games ends without a winner (e.g. a Bloodlines stalemate at one royal each)
    result = ContestResult(game="bloodlines_v0", agent="ppo", opponent="random", seats=2, games=1000, wins=870,
                           shared=0, opponent_wins=30, nobody=100, mean_return=0.84)
    summary = Summary(config_from_dict({"game": "bloodlines_v0"}), 1000, 1.0, 1.0, [result], "ckpt.zip")
    header, _, row = summary.table().splitlines()[-3:]
    cells = dict(zip([c.strip() for c in header.split("|")[1:-1]], [c.strip() for c in row.split("|")[1:-1]],
                     strict=True))
    assert cells["win rate [95% CI]"].startswith("0.870 ")
    assert cells["won by the field"] == "0.030"
    assert cells["no winner"] == "0.100"
    assert cells["CI above fair share"] == "yes"
