"""Train an agent on any game against an opponent pool: MaskablePPO, or PPO on the JAX engines.

    card-envs train --config configs/revolutionary_war.yaml
    card-envs train --config configs/revolutionary_war.yaml --set ppo.learning_rate=1e-4 --set n_envs=4
    card-envs train --config configs/revolutionary_war.yaml --resume      # continue after a kill

Checkpoints, TensorBoard logs (``tensorboard --logdir runs``) and the final summary go to the
config's ``run_dir`` (default ``runs/<config name>``). The last lines printed are the summary table:
win rates of the trained agent against each baseline with 95% confidence intervals.
The config's ``backend`` picks the trainer: ``sb3`` (default; MaskablePPO on the Python envs,
``train/trainer.py``) or ``jax`` (the whole loop jitted on the batched JAX engine, ``train/jax_ppo.py``);
both take the same options and write the same checkpoint format.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from card_envs.core.commands import CommandParser, command_line
from train.config import load_config


@command_line("python -m train")
def main(argv: Sequence[str] | None, prog: str) -> int:
    parser = CommandParser(prog=prog, description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--config", required=True, help="YAML config, e.g. configs/revolutionary_war.yaml")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key (dotted path, YAML value); repeatable")
    parser.add_argument("--resume", action="store_true", help="continue from the run's last checkpoint")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-final-eval", action="store_true", help="skip the final evaluation")
    parser.add_argument("--results", metavar="PREFIX",
                        help="also write the summary to PREFIX.md and PREFIX.json (e.g. benchmarks/results/...)")
    args = parser.parse_args(argv)
    config = load_config(args.config, args.overrides)
    # the trainer (torch, or jax) is imported only once the config is known to be good
    if config.backend == "jax":
        from train.jax_ppo import train
    else:
        from train.trainer import train

    summary = train(config, resume=args.resume, progress=not args.no_progress, final_eval=not args.no_final_eval)
    if args.no_final_eval:
        print(f"trained {summary.num_timesteps:,} decisions; checkpoint {summary.checkpoint}")
        return 0
    if args.results:
        summary.write(args.results)
    command = f"{prog} " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"\n{command}\n\n{summary.table()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
