"""Revolutionary War -- PettingZoo AEC environment.

A two-player card game: each round the players alternately play cards that must be at least
as strong as the last one (strength is cyclic, set by the active trump on a public rotating
stack) until one concedes; the other captures the played cards and the trump. The most cards
captured wins. Full rules: ``card_envs/revolutionary_war/RULES.md``.

=====================  ==========================================================================
Import                 ``from card_envs import revolutionary_war_v0``
Agents                 ``player_0``, ``player_1``
Action space           ``Discrete(14)``
Observation space      ``Dict(observation=Box(float32, (157,)), action_mask=Box(0, 1, (14,), int8))``
=====================  ==========================================================================

Actions
-------
========  ==============  ==========================================================================
index     name            legal when
========  ==============  ==========================================================================
0         ``play A``      the actor holds an Ace and (no card played this round, or A beats the last)
1-9       ``play 2`` ..   same test for ranks 2..10 (index = rank value - 1)
          ``play 10``
10-12     ``play J``,     same test for J, Q, K
          ``play Q``,
          ``play K``
13        ``concede``     always, for the acting player
========  ==============  ==========================================================================

Of several cards of the named rank, the one with the lowest suit (C < D < H < S) is played.

Observation
-----------
The layout table is in :mod:`card_envs.revolutionary_war.encoding` (157 entries; 0-129 are the
spec's vector, 130-156 strength-relative additions). The mask is all zeros for the agent not
to act and for both agents once the episode is over; ``infos[agent]["action_mask"]`` is the same.

Rewards
-------
==================  =============================================================================
``win_loss``        +1 / -1 at the end of the game (match mode: at the end of the match only)
``score_diff``      ``(own - opponent) / 52`` at the end of every game
shaping ``w > 0``   each capture of ``n`` cards: ``+w n / 52`` to the capturer, ``-w n / 52`` to
                    the other; leftover hand cards (R13) likewise at the game's end
truncation          ``max_steps`` reached: both agents truncated, no terminal reward
==================  =============================================================================

All rewards are zero-sum and paid in the step whose action causes them, to both agents.

Options (``env(**options)``)
----------------------------
===================  ===============  ================================================================
option               default          meaning
===================  ===============  ================================================================
``first_dealer``     ``0``            seat (0/1) dealing game 1
``target_score``     ``None``         ``None``: single game; int: match to that total (R23)
``dealer_rotation``  ``"alternate"``  match mode: ``"alternate"`` or ``"fixed"`` dealer
``reward_mode``      ``"win_loss"``   ``"win_loss"`` or ``"score_diff"``
``shaping_weight``   ``0.0``          capture shaping weight ``w`` (>= 0)
``max_steps``        ``None``         truncate after this many decisions
``render_mode``      ``None``         ``"ansi"`` (text), ``"human"`` (prints it) or ``"rgb_array"``
``render_seat``      ``None``         ``"rgb_array"``: draw this seat's view; ``None``: both hands up
===================  ===============  ================================================================

Reset options: ``seed``; ``options={"deck": [52 codes]}`` stacks game 1 (index 0 = top; deal of
spec section 3); ``options={"decks": [[...], None, ...]}`` one deck per match game (``None`` or
missing games are shuffled). Other keys raise
``ConfigError`` naming the valid ones (except ``"options"``, PettingZoo's ``api_test`` probe).

Rendering
---------
===============  ====================================================================================
``render_mode``  ``env.render()`` returns
===============  ====================================================================================
``"rgb_array"``  an ``H x W x 3`` uint8 picture (W = 960; extra ``render``): the trump stack, draw
                 deck, played round, removed cards, and each seat's hand and score pile. Both hands
                 face up, or with ``render_seat=k`` only ``player_k``'s (drawn from its view alone)
``"ansi"``       the table as text, every hand shown (``"human"`` prints it at every reset and step)
===============  ====================================================================================

Engines
-------
=================  ===========================================================================================
engine             what it is for
=================  ===========================================================================================
Python engine      ``card_envs.make_game("revolutionary_war_v0")``: the reference behind this env, the agents,
                   search and evaluation (``rules.py``, ``encoding.py``)
JAX engine         ``card_envs.jax.make("revolutionary_war_v0", **options)`` (extra ``jax``): a ``pgx.Env`` for
                   thousands of games at once under ``jax.jit(jax.vmap(...))``, every option above, the same
                   observation, actions, masks and rewards (``card_envs/jax/revolutionary_war.py``)
=================  ===========================================================================================

Version history
---------------
======  ===========================================================================
v0      first release: spec R0-R23, all options, 157-entry observation
======  ===========================================================================
"""

from __future__ import annotations

from card_envs.core.aec import CardGameEnv, make_env_functions
from card_envs.revolutionary_war.rules import RevolutionaryWar


class RevolutionaryWarEnv(CardGameEnv):
    __doc__ = __doc__
    game_class = RevolutionaryWar


env, raw_env = make_env_functions(RevolutionaryWarEnv)
