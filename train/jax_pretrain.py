"""Imitation warm start of the JAX trainer: the SB3 trainer's ``pretrain`` (``train/pretrain.py``), fitted in JAX.

The demonstrations are the same: ``train.pretrain.collect`` plays ``pretrain.games`` games of the Python
engine with the teacher in every seat (any agent spec, so a teacher without a JAX port -- a search
player, Revolutionary War's exact endgame player -- works too), with ``pretrain.mix`` and the advisor's
advice as configured, and DAgger rounds in which the student plays (a numpy copy of the policy, greedy).
The fit is the same loss: cross-entropy of the masked policy against the teacher's choice (with
``pretrain.label_smoothing`` spread over the legal actions) plus ``pretrain.value_weight`` times the
squared error of the value against the return that followed, with Adam at ``pretrain.learning_rate``,
``pretrain.epochs`` passes in shuffled minibatches of ``pretrain.batch_size`` (the last partial
minibatch of an epoch is left out; the shuffle changes every epoch). Needs no torch.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from card_envs.core.engine import Game
from train.config import TrainConfig
from train.jax_network import Params, forward, log_policy, to_policy_net
from train.pretrain import Demonstrations, Student, collect


def greedy_student(params: Params, activation: str) -> Student:
    """The most probable legal action of the policy, with numpy (the player a checkpoint would be)."""
    net = to_policy_net(params["policy"], activation)

    def act(observation: np.ndarray, mask: np.ndarray) -> int:
        logits = net.logits(observation)
        return int(np.argmax(np.where(mask == 1, logits, -np.inf)))

    return act


def fit(params: Params, data: Demonstrations, *, activation: str, epochs: int, batch_size: int,
        learning_rate: float, value_weight: float, label_smoothing: float,
        seed: int) -> tuple[Params, dict[str, float]]:
    """Fit the policy and value to the demonstrations; the fitted parameters and the last epoch's statistics."""
    optimizer = optax.adam(learning_rate)
    opt_state = optimizer.init(params)
    observations = jnp.asarray(data.observations)
    masks = jnp.asarray(data.masks == 1)
    actions = jnp.asarray(data.actions, jnp.int32)
    returns = jnp.asarray(data.returns)
    batches = max(len(data) // batch_size, 1)
    size = min(batch_size, len(data))

    def loss_fn(p: Params, batch: tuple) -> tuple[jax.Array, dict]:
        observation, mask, action, target = batch
        logits, value = forward(p, observation, activation)
        log_p = log_policy(logits, mask)
        chosen = -jnp.take_along_axis(log_p, action[:, None], axis=1)[:, 0]
        spread = -jnp.sum(jnp.where(mask, log_p, 0.0), axis=1) / jnp.sum(mask, axis=1)
        policy_loss = jnp.mean((1 - label_smoothing) * chosen + label_smoothing * spread)
        value_loss = jnp.mean((value - target) ** 2)
        agree = jnp.mean((jnp.argmax(jnp.where(mask, logits, -jnp.inf), axis=1) == action).astype(jnp.float32))
        return policy_loss + value_weight * value_loss, {"policy_loss": policy_loss, "value_loss": value_loss,
                                                         "accuracy": agree}

    def step(carry: tuple, batch: tuple) -> tuple[tuple, dict]:
        p, o = carry
        (_, info), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, batch)
        updates, o = optimizer.update(grads, o, p)
        return (optax.apply_updates(p, updates), o), info

    @jax.jit
    def epoch(p: Params, o: Any, key: jax.Array, arrays: tuple) -> tuple[Params, Any, dict]:
        # the demonstrations are an argument, not a constant of the compiled epoch (gigabytes for Revolution)
        order = jax.random.permutation(key, len(data))[: batches * size].reshape(batches, size)
        (p, o), info = jax.lax.scan(step, (p, o), tuple(array[order] for array in arrays))
        return p, o, jax.tree.map(jnp.mean, info)

    stats: dict[str, float] = {}
    for key in jax.random.split(jax.random.PRNGKey(seed), epochs):
        params, opt_state, info = epoch(params, opt_state, key, (observations, masks, actions, returns))
        stats = {name: float(value) for name, value in info.items()}
    return params, stats


def warm_start(config: TrainConfig, game: Game, params: Params, progress: bool) -> tuple[Params, dict[str, Any]]:
    """Imitation of ``pretrain.teacher`` then its DAgger rounds on ``game`` (the trainer's Python engine); the
    fitted parameters and their statistics."""
    settings = config.pretrain
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=settings.games + settings.dagger_rounds * settings.dagger_games, unit="game",
                   desc=f"{config.game}: teacher {settings.teacher}", file=sys.stderr, dynamic_ncols=True,
                   mininterval=0.5)
    update = bar.update if bar else None

    def fitted(data: Demonstrations, epochs: int, seed: int) -> tuple[Params, dict[str, float]]:
        if bar is not None:
            bar.set_postfix_str(f"{len(data):,} decisions; fitting {epochs} epochs")
            bar.refresh()
        return fit(params, data, activation=config.ppo.activation, epochs=epochs, batch_size=settings.batch_size,
                   learning_rate=settings.learning_rate, value_weight=settings.value_weight,
                   label_smoothing=settings.label_smoothing, seed=seed)

    started = time.perf_counter()
    data = collect(game, settings.teacher, settings.games, seed=config.seed, progress=update, mix=settings.mix,
                   advisor=config.advisor)
    params, stats = fitted(data, settings.epochs, config.seed)
    student_agreement = []
    for round_ in range(1, settings.dagger_rounds + 1):
        played = collect(game, settings.teacher, settings.dagger_games, seed=config.seed + 7_919 * round_,
                         progress=update, student=greedy_student(params, config.ppo.activation), mix=settings.mix,
                         advisor=config.advisor)
        student_agreement.append(played.student_agreement)
        data = data + played
        params, stats = fitted(data, settings.dagger_epochs, config.seed + round_)
    if bar is not None:
        bar.set_postfix_str(f"{len(data):,} decisions; agreement {stats['accuracy']:.3f}")
        bar.close()
    dagger = {"student_agreement": student_agreement} if student_agreement else {}
    return params, {"teacher": settings.teacher, "decisions": len(data), "seconds": time.perf_counter() - started,
                    **stats, **dagger}


__all__ = ["fit", "greedy_student", "warm_start"]
