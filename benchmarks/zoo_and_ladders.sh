#!/usr/bin/env bash
# Rebuild the shipped agents (agents/players/zoo) and the four ladders (benchmarks/results/ladder_<game>.*), issue 26.
#
#   bash benchmarks/zoo_and_ladders.sh                                  # everything, local processes
#   GAMES="revolutionary_war bloodlines" bash benchmarks/zoo_and_ladders.sh
#   bash benchmarks/zoo_and_ladders.sh --backend ray --address HEAD:6379   # ladder tournaments on a Ray cluster
#
# 1. trains each game's committed config (python -m train --config configs/<game>.yaml; 20-30 min alone on the
#    2-core machine, deterministic for the config's seed) into runs/zoo_<game>, unless its summary.json exists;
# 2. adds the checkpoint to the zoo as zoo:<game>_v0/sb3_ppo (one command: python -m agents.zoo add ...);
# 3. builds the game's ladder (python -m agents.ladder build; the arguments of this script go to it), which also
#    writes each zoo agent's rating into its manifest. Finished chunks of deals are kept in runs/ladder/, so a
#    killed build resumes; the largest is Battlecards (its 100 ms search player plays ~300 searched moves a game).
#
# Bloodlines, Battlecards and Revolution ship the JAX trainer's agents (zoo:<game>_v0/jax_ppo, trained with
# configs/<game>_jax.yaml and added with python -m agents.zoo add --name jax_ppo ...; each manifest says which run):
# steps 1-2 are for the games whose shipped agent is the SB3 trainer's (Revolutionary War). Revolutionary War also
# ships zoo:revolutionary_war_v0/jax_ppo (configs/revolutionary_war_jax.yaml), added after its ladder v1 was built
# and placed on it with python -m agents.ladder --game revolutionary_war_v0 --agent zoo:revolutionary_war_v0/jax_ppo
# --record (benchmarks/results/training_revolutionary_war_v0_jax.md).
set -euo pipefail
cd "$(dirname "$0")/.."
python=.venv/bin/python
commit=$(git rev-parse HEAD)
for game in ${GAMES:-revolutionary_war bloodlines revolution battlecards}; do
    case $game in bloodlines|battlecards|revolution) continue;; esac  # their shipped agents are JAX runs (above)
    run=runs/zoo_$game
    if [ ! -f "$run/summary.json" ]; then
        if [ -f "$run/checkpoint.zip" ]; then
            echo "$run has a checkpoint but no summary: the run was killed. Resume it (python -m train --config" \
                 "configs/$game.yaml --set run_dir=$run --resume: the same step count, not the same weights) or" \
                 "delete $run to train afresh." >&2
            exit 1
        fi
        "$python" -m train --config "configs/$game.yaml" --set "run_dir=$run" --no-progress
    fi
    "$python" -m agents.zoo add --checkpoint "$run/checkpoint.zip" --name sb3_ppo --summary "$run/summary.json" \
        --command "python -m train --config configs/$game.yaml" --commit "$commit" --force \
        --report "benchmarks/results/training_${game}_v0.md"
done
for game in ${GAMES:-revolutionary_war bloodlines revolution battlecards}; do
    "$python" -m agents.ladder build --game "${game}_v0" "$@"
done
"$python" -m agents.ladder show
