"""The training configuration: a schema of dataclasses, loaded from YAML, overridable from the CLI.

``load_config("configs/revolutionary_war.yaml", ["ppo.learning_rate=1e-4"])`` reads the file,
applies each ``key=value`` override (dotted path; the value is parsed as YAML), and validates the
result against :class:`TrainConfig`: an unknown key, a value of the wrong type or one out of range
is a :class:`~card_envs.core.errors.ConfigError` naming the key and what would be right -- before
anything is built. Every key has a default except ``game``.

==========================  ==========================================================================
key                         meaning
==========================  ==========================================================================
``game``                    environment name, one of ``card_envs.ENV_NAMES``
``backend``                 ``sb3`` (MaskablePPO on the Python envs, ``train/trainer.py``) or ``jax``
                            (PPO with the whole loop jitted on the batched JAX engine,
                            ``train/jax_ppo.py``; keys that only one backend reads are refused by the other)
``env_options``             the game's options (its ``env(**options)``), e.g. ``{num_players: 4}``
``seed``                    seeds the model, the environments and the pool
``total_timesteps``         learner decisions to train for (rounded up to whole rollouts)
``n_envs``                  parallel environments (``n_steps * n_envs`` decisions per rollout)
``vec_env``                 ``dummy`` (one process), ``subproc`` (one process per env) or ``async``
                            (one worker process collects the next rollout while PPO trains on the
                            last: one update of policy lag; ``train/async_rollouts.py``)
``torch_threads``           ``torch.set_num_threads``
``checkpoint_interval``     learner decisions between checkpoints (a kill loses at most this)
``run_dir``                 where checkpoints, TensorBoard logs and the summary go (default
                            ``runs/<config file stem>``)
``duplicate_baseline``      an agent spec (e.g. ``heuristic:counting``) or ``null``: every training
                            deal is replayed with that agent in the learner's seat and the learner
                            is paid its return minus the agent's (card luck cancels; the expected
                            gradient is unchanged; ``SingleAgentEnv``'s ``baseline``). One more game
                            per episode
``draw_reward``             added to the learner's final reward when a training game ends without a
                            winner (``SingleAgentEnv``'s ``draw_reward``); ``-1`` scores a two-player
                            draw as a loss, so PPO maximises the win rate the evaluation counts
``advisor``                 an agent spec (e.g. ``heuristic:counting``) or ``null``: the policy also
                            reads, as a one-hot after the observation, the action that agent would
                            take (residual policy learning: ``SingleAgentEnv``'s ``advisor``). The
                            trained player computes the same advice when it plays
``init_from``               a checkpoint whose policy and value weights a fresh run starts from
                            (same game and network; new optimizer, schedules and pool)
``pool.weights``            opponent -> sampling weight: ``random``, ``heuristic:<name>``,
                            a trained model (``zoo:<game>/<name>``, ``checkpoint:<path>``; frozen),
                            ``self`` (frozen snapshots of the learner), and under ``backend: jax``
                            ``pretrained`` (the policy the run started from -- the imitation warm start
                            or ``init_from`` -- frozen, greedy: a clone of a teacher with no JAX port)
``pool.snapshot_every``     PPO updates between two snapshots of the learner
``pool.max_snapshots``      snapshots kept (oldest dropped); ``self`` draws uniformly among them
``ppo.*``                   MaskablePPO hyper-parameters (see :class:`PPOConfig`)
``pretrain.teacher``        imitation warm start from this player (e.g. ``heuristic:endgame``, or a
                            search player ``ismcts:...``), or ``null``; ``pretrain.games`` episodes,
                            ``epochs``, ``batch_size``, ``learning_rate``, ``value_weight``; then
                            ``dagger_rounds`` of ``dagger_games`` games played by the student,
                            labelled by the teacher, refitting ``dagger_epochs``; ``mix``: other
                            players seated in those games, agent spec -> chance per seat (see
                            ``train/pretrain.py``); ``label_smoothing``: the share of the target
                            spread over the legal actions (the clone keeps exploring)
``eval.interval``           learner decisions between evaluations (0: only at the end)
``eval.games``              games against each baseline at every evaluation
``eval.final_games``        games against each baseline in the final summary
``eval.opponents``          baselines (default: ``random`` and every rule-based player of the game;
                            trained models too)
``eval.deterministic``      the trained player takes the most probable action (else it samples)
``eval.workers``            processes for evaluation games
``eval.keep_best``          ``backend: jax`` only: also evaluate the starting policy (decision 0), and
                            keep the evaluated policy with the best win rate against the first of
                            ``eval.opponents`` as ``best.zip`` beside the checkpoint (the earliest on a
                            tie); ``card-envs exploit`` measures the better of it and the last policy
``jax.*``                   ``backend: jax`` only (see :class:`JaxConfig`): ``updates_per_call`` (PPO
                            updates per jitted call: the granularity of the progress bar, checkpoints and
                            evaluations), ``active_snapshots`` (snapshots of the learner seated during
                            one rollout), ``network`` (``shared`` torso for policy and value, or
                            ``separate`` networks as SB3 builds them), ``self_play`` (share of the games
                            with the learner in every seat). Under ``backend: jax``, ``ppo.n_steps`` counts
                            the decisions of every seat of a game per rollout (the learner's are trained
                            on), and ``ppo.batch_size`` the learner decisions of a minibatch
==========================  ==========================================================================

Keys the ``jax`` backend does not read (``vec_env``, ``torch_threads``, ``duplicate_baseline``, and
``draw_reward``: a JAX engine's state says what each seat was paid, not who won) must keep their defaults
there, and ``jax.*`` keys theirs under ``sb3``: a config never says something that is silently ignored.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from card_envs.core.config import finite_number
from card_envs.core.errors import ConfigError

ACTIVATIONS = ("tanh", "relu")


@dataclass
class PoolConfig:
    """Who the learner plays against."""

    weights: dict[str, float] = field(default_factory=lambda: {"random": 1.0, "self": 1.0})
    snapshot_every: int = 10
    max_snapshots: int = 10

    def validate(self) -> None:
        if not self.weights:
            raise ConfigError("pool.weights must name at least one opponent")
        for name, weight in self.weights.items():
            if weight < 0:
                raise ConfigError(f"pool.weights.{name} must be >= 0, got {weight}")
        if sum(self.weights.values()) <= 0:
            raise ConfigError("pool.weights must have a positive total")
        _positive("pool.snapshot_every", self.snapshot_every)
        _positive("pool.max_snapshots", self.max_snapshots)


@dataclass
class PPOConfig:
    """MaskablePPO hyper-parameters (names as in stable-baselines3)."""

    net_arch: list[int] = field(default_factory=lambda: [128, 128])
    activation: Literal["tanh", "relu"] = "tanh"
    learning_rate: float = 3e-4
    lr_schedule: Literal["constant", "linear"] = "constant"
    n_steps: int = 256
    batch_size: int = 512
    n_epochs: int = 4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    normalize_advantage: bool = True

    def validate(self) -> None:
        if not self.net_arch or any(width < 1 for width in self.net_arch):
            raise ConfigError(f"ppo.net_arch must be a non-empty list of layer widths >= 1, got {self.net_arch}")
        for name in ("learning_rate", "clip_range", "max_grad_norm"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"ppo.{name} must be > 0, got {getattr(self, name)}")
        for name in ("n_steps", "batch_size", "n_epochs"):
            _positive(f"ppo.{name}", getattr(self, name))
        for name in ("gamma", "gae_lambda"):
            if not 0 <= getattr(self, name) <= 1:
                raise ConfigError(f"ppo.{name} must be between 0 and 1, got {getattr(self, name)}")
        for name in ("ent_coef", "vf_coef"):
            if getattr(self, name) < 0:
                raise ConfigError(f"ppo.{name} must be >= 0, got {getattr(self, name)}")
        if self.target_kl is not None and self.target_kl <= 0:
            raise ConfigError(f"ppo.target_kl must be > 0 or null, got {self.target_kl}")


@dataclass
class PretrainConfig:
    """Imitation warm start of a fresh run (train/pretrain.py); ``teacher: null`` turns it off."""

    teacher: str | None = None
    games: int = 2000
    epochs: int = 10
    batch_size: int = 256
    learning_rate: float = 1e-3
    value_weight: float = 0.5
    #: DAgger rounds after the first fit: the student plays ``dagger_games`` games in every seat, the
    #: teacher labels each position it reaches, and the policy refits on all data for ``dagger_epochs``
    dagger_rounds: int = 0
    dagger_games: int = 1000
    dagger_epochs: int = 2
    #: other players seated in the demonstration games: agent spec -> chance that a seat is theirs (the
    #: rest are the teacher's, or the student's in DAgger rounds); their decisions are not recorded
    mix: dict[str, float] = field(default_factory=dict)
    #: the policy is fitted to ``1 - label_smoothing`` on the teacher's choice and the rest spread evenly over
    #: the legal actions, so the clone keeps exploring where it copies a deterministic teacher exactly
    label_smoothing: float = 0.0

    def validate(self) -> None:
        _positive("pretrain.games", self.games)
        if not 0 <= self.label_smoothing < 1:
            raise ConfigError(f"pretrain.label_smoothing must be in [0, 1), got {self.label_smoothing}")
        _positive("pretrain.epochs", self.epochs)
        _positive("pretrain.batch_size", self.batch_size)
        _positive("pretrain.dagger_games", self.dagger_games)
        _positive("pretrain.dagger_epochs", self.dagger_epochs)
        if self.dagger_rounds < 0:
            raise ConfigError(f"pretrain.dagger_rounds must be >= 0, got {self.dagger_rounds}")
        if self.learning_rate <= 0:
            raise ConfigError(f"pretrain.learning_rate must be > 0, got {self.learning_rate}")
        if self.value_weight < 0:
            raise ConfigError(f"pretrain.value_weight must be >= 0, got {self.value_weight}")
        for name, chance in self.mix.items():
            if not 0 <= chance <= 1:
                raise ConfigError(f"pretrain.mix.{name} must be a chance between 0 and 1, got {chance}")
        if sum(self.mix.values()) > 1:
            raise ConfigError(f"pretrain.mix chances must add up to at most 1, got {sum(self.mix.values()):g}")


@dataclass
class EvalConfig:
    """Evaluation against the baselines with :func:`agents.tournaments.match.contest`."""

    interval: int = 100_000
    games: int = 200
    final_games: int = 2000
    opponents: list[str] | None = None
    deterministic: bool = True
    workers: int = 1
    keep_best: bool = False

    def validate(self) -> None:
        if self.interval < 0:
            raise ConfigError(f"eval.interval must be >= 0 (0: only at the end), got {self.interval}")
        _positive("eval.games", self.games)
        _positive("eval.final_games", self.final_games)
        _positive("eval.workers", self.workers)
        if self.opponents is not None and not self.opponents:
            raise ConfigError("eval.opponents must be null (every baseline) or a non-empty list")
        if self.keep_best and self.interval == 0:
            raise ConfigError("eval.keep_best chooses among the evaluations during training: it needs "
                              "eval.interval > 0")


@dataclass
class JaxConfig:
    """Settings of the JAX trainer (``backend: jax``, ``train/jax_ppo.py``)."""

    #: PPO updates per call of the jitted loop; progress, logs, snapshots' bookkeeping on the host,
    #: checkpoints and evaluations happen between calls (a kill loses at most one call)
    updates_per_call: int = 10
    #: snapshots of the learner seated during one rollout, drawn uniformly from the pool at every update
    #: (each costs one forward pass per opponent decision, whoever plays)
    active_snapshots: int = 1
    #: ``shared``: one torso, a policy head and a value head; ``separate``: a policy network and a value
    #: network of ``ppo.net_arch`` each, as SB3's MlpPolicy (twice the compute)
    network: Literal["shared", "separate"] = "shared"
    #: share of the ``n_envs`` games in which the learner's current policy sits in every seat (each of its
    #: decisions trains); ``pool.weights`` seats the others' opponents
    self_play: float = 0.0

    def validate(self) -> None:
        _positive("jax.updates_per_call", self.updates_per_call)
        _positive("jax.active_snapshots", self.active_snapshots)
        if not 0.0 <= self.self_play <= 1.0:
            raise ConfigError(f"jax.self_play must be a share in [0, 1], got {self.self_play}")


@dataclass
class TrainConfig:
    """Everything one training run needs; see the module table."""

    game: str
    env_options: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    total_timesteps: int = 1_000_000
    n_envs: int = 8
    vec_env: Literal["dummy", "subproc", "async"] = "dummy"
    torch_threads: int = 1
    checkpoint_interval: int = 50_000
    run_dir: str | None = None
    init_from: str | None = None
    duplicate_baseline: str | None = None
    draw_reward: float = 0.0
    advisor: str | None = None
    backend: Literal["sb3", "jax"] = "sb3"
    pool: PoolConfig = field(default_factory=PoolConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    jax: JaxConfig = field(default_factory=JaxConfig)

    def validate(self) -> None:
        import card_envs
        from agents.players.registry import agent_names

        if self.game not in card_envs.ENV_NAMES:
            raise ConfigError(f"game must be one of {', '.join(card_envs.ENV_NAMES)}, got {self.game!r}")
        card_envs.make_game(self.game, **self.env_options)  # the game's own option checks
        for name in ("total_timesteps", "n_envs", "torch_threads", "checkpoint_interval"):
            _positive(name, getattr(self, name))
        if self.seed < 0:
            raise ConfigError(f"seed must be >= 0, got {self.seed}")
        finite_number("draw_reward", self.draw_reward)
        baselines = agent_names(self.game)
        own = ["self", "pretrained"] if self.backend == "jax" else ["self"]
        models = _check_models(self.game, [*self.pool.weights, *(self.eval.opponents or [])])
        _check_known(self.game, "pool.weights", "opponent", self.pool.weights, [*own, *baselines, *models])
        if self.duplicate_baseline is not None:
            _check_known(self.game, "duplicate_baseline", "agent", [self.duplicate_baseline], baselines)
        if self.advisor is not None:
            _check_known(self.game, "advisor", "agent", [self.advisor], baselines)
        _check_known(self.game, "eval.opponents", "baseline", self.eval.opponents or [], [*baselines, *models])
        rollout = self.ppo.n_steps * self.n_envs
        if self.ppo.batch_size > rollout:
            raise ConfigError(f"ppo.batch_size ({self.ppo.batch_size}) must be <= ppo.n_steps * n_envs ({rollout})")
        if self.pretrain.teacher is not None:
            from agents.players.registry import make_agent

            make_agent(self.game, self.pretrain.teacher)  # an unknown teacher fails here
            _check_known(self.game, "pretrain.mix", "agent", self.pretrain.mix, baselines)
        self.pool.validate()
        self.ppo.validate()
        self.pretrain.validate()
        self.eval.validate()
        self.jax.validate()
        self._check_backend()

    def _check_backend(self) -> None:
        """Refuse keys the chosen backend would not read (a config never says what is then ignored)."""
        defaults = TrainConfig(game=self.game)
        if self.backend == "jax":
            for key in ("vec_env", "torch_threads", "duplicate_baseline", "draw_reward"):
                if getattr(self, key) != getattr(defaults, key):
                    raise ConfigError(f"{key} is a setting of the sb3 backend; backend: jax does not read it "
                                      f"(remove it, or set backend: sb3)")
            from agents.players.registry import is_trained_model
            from train.jax_players import ported  # no jax import: the list of ported players only

            playable = ["random", *ported(self.game)]
            if self.pool.weights.get("pretrained", 0) > 0 and self.pretrain.teacher is None and self.init_from is None:
                raise ConfigError("pool.weights: pretrained seats the policy the run starts from, which needs a warm "
                                  "start (pretrain.teacher) or init_from; without either it is the untrained network")
            for name in self.pool.weights:
                if name not in ("self", "pretrained") and name not in playable and not is_trained_model(name):
                    raise ConfigError(f"pool.weights: {name} has no JAX port, so backend: jax cannot seat it; "
                                      f"JAX opponents of {self.game}: self, pretrained, {', '.join(playable)}, "
                                      "zoo:<game>/<name>, checkpoint:<path>")
            if self.advisor is not None and self.advisor not in playable:
                raise ConfigError(f"advisor: {self.advisor} has no JAX port, so backend: jax cannot ask it; "
                                  f"ported players of {self.game}: {', '.join(playable)}")
        elif self.eval.keep_best:
            raise ConfigError("eval.keep_best is a setting of backend: jax; this config has backend: sb3")
        elif self.jax != defaults.jax:
            changed = [f"jax.{f.name}" for f in dataclasses.fields(JaxConfig)
                       if getattr(self.jax, f.name) != getattr(defaults.jax, f.name)]
            raise ConfigError(f"{', '.join(changed)}: settings of backend: jax; this config has backend: sb3")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def eval_opponents(self) -> list[str]:
        """The baselines evaluated against: ``eval.opponents`` or every registered one."""
        from agents.players.registry import agent_names

        return list(self.eval.opponents or agent_names(self.game))


def _check_models(game: str, names: Iterable[str]) -> list[str]:
    """The trained models among ``names`` (``zoo:``, ``checkpoint:``), each built once: a missing file or a model of
    another game fails here, before anything is trained."""
    from agents.players.registry import is_trained_model, make_agent

    models = [name for name in names if is_trained_model(name)]
    for name in models:
        make_agent(game, name)
    return models


def _check_known(game: str, key: str, kind: str, names: Iterable[str], known: Sequence[str]) -> None:
    """A clear error for the first of ``names`` (given under ``key``) that is not in ``known``."""
    for name in names:
        if name not in known:
            raise ConfigError(f"{key}: unknown {kind} {name!r} for {game}; known: {', '.join(known)}")


def _positive(name: str, value: int) -> None:
    if value < 1:
        raise ConfigError(f"{name} must be >= 1, got {value}")


# -- building from plain data ---------------------------------------------------------------------


def config_from_dict(data: Mapping[str, Any]) -> TrainConfig:
    """Validate ``data`` (nested dicts, e.g. parsed YAML) into a :class:`TrainConfig`."""
    config = _build(TrainConfig, data, "")
    config.validate()
    return config


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> TrainConfig:
    """Read a YAML config, apply ``key=value`` overrides, validate. ``run_dir`` defaults to ``runs/<stem>``."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping of keys, got {type(data).__name__}")
    data = apply_overrides(data, overrides)
    data.setdefault("run_dir", str(Path("runs") / path.stem))
    return config_from_dict(data)


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """A copy of ``data`` with every ``dotted.key=value`` set (value parsed as YAML; ``null`` is None)."""
    result = _deep_copy(data)
    for override in overrides:
        key, sep, text = override.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override {override!r} must look like key=value, e.g. ppo.learning_rate=1e-4")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as error:
            raise ConfigError(f"override {override!r}: the value is not valid YAML: {error}") from None
        parts = key.strip().split(".")
        node = result
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {override!r}: {'.'.join(parts[:depth + 1])} is not a section")
            node = child
        node[parts[-1]] = value
    return result


def differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted keys whose values differ between two config dicts (floats compared with a tolerance)."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(set(old) | set(new))
        return [d for k in keys for d in differences(old.get(k), new.get(k), f"{prefix}{k}.")]
    if old == new or (isinstance(old, float) and isinstance(new, float) and math.isclose(old, new)):
        return []
    return [prefix.rstrip(".")]


def _deep_copy(data: Any) -> Any:
    if isinstance(data, Mapping):
        return {key: _deep_copy(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_deep_copy(value) for value in data]
    return data


def _build(cls: type, data: Any, prefix: str) -> Any:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{prefix.rstrip('.') or 'the config'} must be a mapping of keys, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(prefix + str(k) for k in unknown)}; "
                          f"valid keys{' in ' + prefix.rstrip('.') if prefix else ''}: {', '.join(fields)}")
    hints = typing.get_type_hints(cls)
    values = {}
    for name, f in fields.items():
        if name in data:
            values[name] = _convert(data[name], hints[name], prefix + name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(f"missing required key {prefix + name!r}")
    return cls(**values)


def _convert(value: Any, hint: Any, key: str) -> Any:
    """``value`` checked (and, for numbers written as text, converted) against the annotation ``hint``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, key + ".")
    if origin in (typing.Union, _union_type()):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _convert(value, option, key)
            except ConfigError as error:
                errors.append(str(error))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{key}: {value!r} matches none of {hint}")
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"{key} must be one of {', '.join(map(repr, args))}, got {value!r}")
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{key} must be a list, got {value!r}")
        return [_convert(item, args[0], f"{key}[{i}]") for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key} must be a mapping, got {value!r}")
        return {str(k): _convert(v, args[1], f"{key}.{k}") for k, v in value.items()}
    if hint is Any:
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key} must be an integer, got {value!r}")
        return value
    if hint is float:
        number = _as_float(value)
        if number is None:
            raise ConfigError(f"{key} must be a number, got {value!r}")
        return number
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key} must be a string, got {value!r}")
        return value
    raise TypeError(f"schema annotation {hint!r} of {key} is not supported")  # a bug in the schema, not input


def _as_float(value: Any) -> float | None:
    """A float from a number, or from text such as ``1e-4`` (which YAML 1.1 reads as a string)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _union_type() -> Any:
    import types

    return types.UnionType


__all__ = ["ACTIVATIONS", "EvalConfig", "JaxConfig", "PPOConfig", "PoolConfig", "PretrainConfig", "TrainConfig",
           "apply_overrides", "config_from_dict", "differences", "load_config"]
