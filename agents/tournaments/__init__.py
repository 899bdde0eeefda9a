"""Everything that compares players.

===============  ==================================================================================================
``records``      who plays (contestants), the design (lineups, seatings, deals) and what each game leaves
``saved_games``  every game as a JSON file that replays exactly
``backends``     where chunks of games run: local processes or a Ray cluster
``match``        one agent against a field, seats rotated, Wilson intervals (``card-envs match``)
``stats``        duplicate-deal statistics, ratings, the sequential test
``report``       Markdown, CSV, JSON and PNG of an evaluation
``evaluate``     the evaluation harness (``card-envs evaluate``)
``ladder``       each game's published ladder of reference players (``card-envs ladder``)
===============  ==================================================================================================

Listed from the bottom up: each module imports only those above it in this table, and ``agents.players``.
"""
