"""Batched JAX engines of the games, on Pgx's ``Env`` API (optional extra ``card-envs[jax]``: jax, pgx).

>>> import jax
>>> from card_envs import jax as cj            # needs ``pip install card-envs[jax]``
>>> env = cj.make("revolutionary_war_v0")       # a pgx.Env; options as in the Python engine
>>> state = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.PRNGKey(0), 1024))
>>> state.observation.shape                     # the PettingZoo env's observation, for each of 1,024 games
(1024, 157)

Which engine does what: the Python engines (``card_envs.make_game``, the PettingZoo ``env()``) are the
reference, used by the agents, search and evaluation; the JAX engines play thousands of games at once under
``jax.jit(jax.vmap(...))`` with exactly the same observations (``env.observe(state, player)`` is
``game.encode(state.view(player))``), action ids, legal masks and per-step rewards, so one policy plays on
either side. ``card_envs.jax.lockstep`` proves the agreement decision by decision.

========================  ======================  =============================================================
game                      module                  options
========================  ======================  =============================================================
``revolutionary_war_v0``  ``revolutionary_war``   all: ``first_dealer``, ``target_score`` (match),
                                                  ``dealer_rotation``, ``reward_mode``, ``shaping_weight``,
                                                  ``max_steps``
``revolution_v0``         ``revolution``          all: ``num_hands`` (series), ``first_dealer`` (incl. ``"random"``),
                                                  ``allow_yield_first_trick``, ``forced_lead_restricted``,
                                                  ``full_recall``, ``void_inferences``, ``max_extra_hands``
                                                  (tie-break hands), ``max_steps``, ``reward_mode``,
                                                  ``trick_reward``
``battlecards_v0``        ``battlecards``         all: ``num_players`` (2-6), ``jokers``, ``joker_initial_value``,
                                                  ``retire_lowest_on_flip``, ``retire_max_rank``, ``cease_fire``,
                                                  ``hand_size``, ``war_facedown_count``, ``max_rounds``,
                                                  ``truncation_scoring``, ``shaping_weight``, ``first_leader``,
                                                  ``shuffle_mid_game``
``bloodlines_v0``         ``bloodlines``          all: ``bloodlines``, ``starting_player``, ``hand_limit``,
                                                  ``joker_cost``, ``joker_supply``, ``allow_pass``,
                                                  ``auto_skip_forced``, ``max_turns``, ``unfinished_result``,
                                                  ``shaping_weight``
========================  ======================  =============================================================

``available_games()`` lists the engines installed in this checkout. An option an engine cannot run is refused
by ``make`` with an error naming it, never ignored; unknown options and bad values get the Python engine's
:class:`~card_envs.core.errors.ConfigError`.

======================================  =======================================================================
entry point                             what it does
======================================  =======================================================================
``make(name, **options)``               the game's :class:`~card_envs.jax.core.CardEnv` (``init``, ``step``,
                                        ``observe``, ``num_players``, ``num_actions``, ``observation_shape``)
``from_state(py_state, key=None)``      the JAX ``State`` equal to any Python position (search from a real
                                        position, lockstep tests); ``env.from_states([...])`` for a batch
``random_legal_actions(key, mask)``     a random legal action per state of a batch
``step_autoreset(env)``                 a per-state step that starts the next episode when one ends (trainers)
``reset_finished(env, states, ...)``    re-deal the finished states of a batch, ``slots`` at a time
``env.step_batch_last(states, a)``     a batch with the batch axis *last* (``env.init_batch_last``,
                                        ``batch_last`` / ``batch_first`` convert): the states of
                                        ``vmap(env.step)``, faster on CPU for the engines built for it
``across_devices(fn, batch_axis=0)``    a jitted loop over a batch split over every device: one per CPU
                                        core with ``JAX_NUM_CPU_DEVICES`` (``split_over_devices`` places it)
======================================  =======================================================================

Conventions (Pgx's): ``current_player`` is ``0`` once the episode is over, the mask is all True then, an
illegal action ends the episode with -1 for the mover, and a step after the end changes nothing; see
:mod:`card_envs.jax.core`. Importing ``card_envs`` (or any PettingZoo env) never imports this package or jax.
"""

from __future__ import annotations

try:
    import jax as _jax  # noqa: F401
    import pgx as _pgx  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"card_envs.jax needs jax and pgx ({error.name} is missing): pip install 'card-envs[jax]'"
    ) from error

from card_envs.jax.core import (
    JAX_GAMES,
    CardEnv,
    CardState,
    across_devices,
    available_games,
    batch_first,
    batch_last,
    from_state,
    make,
    random_legal_actions,
    reset_finished,
    split_over_devices,
    step_autoreset,
)

__all__ = [
    "JAX_GAMES", "CardEnv", "CardState", "across_devices", "available_games", "batch_first", "batch_last",
    "from_state", "make", "random_legal_actions", "reset_finished", "split_over_devices", "step_autoreset",
]
