"""Revolution -- PettingZoo AEC environment.

A four-player trick-taking game without partnerships. The ``AS`` holder leads the first trick;
later leads are restricted (not the suit led to the previous trick, not above the rank of the
card that won it), and a leader may yield the lead, which is then offered to the right. A
follower void in the led suit who plays a card not of the previous trick's led suit "starts a
revolution": that suit becomes the trick's trump, and everyone after may play anything. A hand
ends when a player has won 4 tricks; each trick won is a point, and the highest total after
``num_hands`` hands (plus tie-break hands) wins. Full rules: ``card_envs/revolution/RULES.md``.

=====================  ==========================================================================
Import                 ``from card_envs import revolution_v0``
Agents                 ``player_0``, ``player_1``, ``player_2``, ``player_3`` (clockwise)
Action space           ``Discrete(53)``
Observation space      ``Dict(observation=Box(float32, (541,)), action_mask=Box(0, 1, (53,), int8))``;
                       ``(753,)`` with ``full_recall=True``, ``(909,)`` with ``void_inferences=True``
=====================  ==========================================================================

Actions
-------
========  ===============  ======================================================================
index     name             legal when
========  ===============  ======================================================================
0-51      ``play 2C`` ..   the card (index ``13 * suit + rank``, suits C D H S, ranks 2 .. A) is
          ``play AS``      held and in the legal set of the decision: opening lead (any card),
                           designated lead (not the previous-led suit, rank <= previous winning
                           card), offered or forced lead (any card), follow (the led suit if
                           held; else a card not of the previous-led suit if held; else any; any
                           card once trump is fixed)
52        ``pass``         designated lead on tricks 2+ (yield), offered lead (decline); opening
                           lead only with ``allow_yield_first_trick``; never otherwise
========  ===============  ======================================================================

Every decision goes to the agent, even when only one action is legal (R21).

Engines
-------
========================================  =========================================================
engine                                    what it does
========================================  =========================================================
``card_envs.revolution.rules``            the rules (Python): the reference. This env, the agents
                                          (rule-based, ISMCTS), evaluation and training run on it
``card_envs.revolution.encoding``         the observation of a player's view and the action layout
                                          (the tables below)
``card_envs.jax.make("revolution_v0")``   the same game in JAX (optional extra ``card-envs[jax]``,
                                          Pgx API): batched ``init`` / ``step`` under ``jax.vmap``,
                                          every option above; observations, action ids, masks and
                                          per-step rewards equal to this env's (checked decision by
                                          decision by ``card_envs.jax.lockstep``); its deals come
                                          from the key of ``init``. ``card_envs.jax.from_state(state)``
                                          converts any position of this engine
========================================  =========================================================

Observation
-----------
The layout tables are in :mod:`card_envs.revolution.encoding`: 541 entries by default (the
spec's proposal: own holding, current and previous trick by relative seat, leaders, passes,
phase, suits, counts, scores), 753 with ``full_recall`` (plus every card played this hand by
relative seat and the passes this hand), 909 with ``void_inferences`` (plus, for each opponent,
the cards it may still hold after what the tricks proved: voids and walls, spec 7.3).
``encoding.LAYOUT`` / ``RECALL_LAYOUT`` / ``INFERENCE_LAYOUT`` list the blocks. The mask is all
zeros for every agent not to act and for everyone once the episode is over;
``infos[agent]["action_mask"]`` is the same.

Rewards
-------
====================  ===========================================================================
``win`` (default)     at the end: each of the ``k`` seats with the top final score gets
                      ``(4 - k) / (3k)``, everyone else ``-1/3`` (a unique winner +1)
``margin``            at the end: ``(S_i - mean S) / (4 Hs)``, ``Hs`` = hands started
``trick_reward w``    each completed trick: ``+w`` to its winner, ``-w/3`` to each other seat
truncation            ``max_steps`` decisions made: all agents truncated, and the terminal
                      formula is applied to cumulative scores + tricks won in the unfinished hand
====================  ===========================================================================

All rewards are zero-sum and paid to all four agents in the step whose action causes them.

Options (``env(**options)``)
----------------------------
===========================  ==========  ========================================================
option                       default     meaning
===========================  ==========  ========================================================
``num_hands``                ``4``       scheduled hands (>= 1)
``first_dealer``             ``0``       dealer of hand 1: seat 0-3 or ``"random"`` (seeded)
``allow_yield_first_trick``  ``False``   the ``AS`` holder may pass on trick 1
``forced_lead_restricted``   ``False``   a lead returned to ``D`` must be restricted-legal if
                                         ``D`` holds such a card
``full_recall``              ``False``   observe every card played this hand and the passes
``max_extra_hands``          ``10``      most tie-break hands (>= 0); then the top seats share
``max_steps``                ``None``    truncate after this many decisions (>= 1)
``reward_mode``              ``"win"``   ``"win"`` or ``"margin"``
``trick_reward``             ``0.0``     shaping weight ``w`` (>= 0) per trick
``void_inferences``          ``False``   (ours, not the spec's; needs ``full_recall``) also observe
                                         the cards each opponent may still hold
``render_mode``              ``None``    ``"ansi"`` (text), ``"human"`` (prints it) or ``"rgb_array"``
``render_seat``              ``None``    ``"rgb_array"``: draw this seat's view; ``None``: every hand up
===========================  ==========  ========================================================

Reset options: ``seed``; ``options={"deck": [52 codes]}`` stacks hand 1 (index 0 = top; deck
index ``i`` goes to seat ``(dealer + 1 + i) mod 4``); ``options={"decks": [[...], None, ...]}``
one deck per hand (``None`` or missing hands are shuffled). Other keys raise
``ConfigError`` naming the valid ones (except ``"options"``, PettingZoo's ``api_test`` probe).

Rendering
---------
===============  ====================================================================================
``render_mode``  ``env.render()`` returns
===============  ====================================================================================
``"rgb_array"``  an ``H x W x 3`` uint8 picture (W = 960; extra ``render``): the current and previous
                 tricks (with ``full_recall`` the earlier ones too), each seat's holding, tricks and
                 score. Every holding face up, or with ``render_seat=k`` only ``player_k``'s
``"ansi"``       the table as text, every hand shown (``"human"`` prints it at every reset and step)
===============  ====================================================================================

Version history
---------------
======  ===========================================================================
v0      first release: spec R1-R24, all options of section 6, 541/753-entry observation;
        later the ``void_inferences`` option (909 entries), which changes nothing when off
======  ===========================================================================
"""

from __future__ import annotations

from card_envs.core.aec import CardGameEnv, make_env_functions
from card_envs.revolution.rules import Revolution


class RevolutionEnv(CardGameEnv):
    __doc__ = __doc__
    game_class = Revolution


env, raw_env = make_env_functions(RevolutionEnv)
