"""Battlecards -- PettingZoo AEC environment.

A strategic version of War for 2 to 6 players: each player holds a private hand of (up to) five
cards drawn from a face-down pile. Every round the leader and then each other player clockwise
plays a card face up; the single highest card takes the table. A tie for the highest card starts a
war: each tied player adds three cards face down and then shows a card *chosen from hand*, in
reverse order of entry into the war. Won cards go to a face-up pile that is only turned over (and
shuffled) once both hand and face-down pile are empty. The last player holding cards wins. Full
rules: ``card_envs/battlecards/RULES.md`` (spec ``specs/battlecards.md``).

=====================  ==========================================================================
Import                 ``from card_envs import battlecards_v0``
Agents                 ``player_0`` .. ``player_{N-1}``, ``N = num_players`` (2-6)
Action space           ``Discrete(14)``
Observation space      ``Dict(observation=Box(float32, (533,)), action_mask=Box(0, 1, (14,), int8))``
=====================  ==========================================================================

Actions
-------
Every decision is "choose a card of kind ``a`` from your hand"; what happens to the card depends on
the decision kind (LEAD / FOLLOW / BURY / WAR_UP), which is part of the observation (indices 0-3).

========  ==============  ==========================================================================
index     name            legal when
========  ==============  ==========================================================================
0-8       ``play 2`` ..   the acting player's hand holds a card of that rank (index = value - 2)
          ``play 10``
9-12      ``play J``,     same for J, Q, K, A
          ``play Q``,
          ``play K``,
          ``play A``
13        ``play X``      the hand holds a joker (Joker variant only)
========  ==============  ==========================================================================

Of several cards of the chosen kind, the one with the lowest suit (C < D < H < S; X1 < X2) leaves
the hand (R22). The descriptive name of an action in context (``follow 9``, ``bury 2``, ``war-up A``)
is ``env.unwrapped.state_.describe_action(a)``.

Observation
-----------
The layout table is in :mod:`card_envs.battlecards.encoding` (533 entries: the decision kind, own
hand, own buried cards, own pile knowledge, six seat blocks of 70 relative to the observer and padded
to six seats, the table, and globals such as the joker value, the retirement level, the discard and
the per-kind count of unaccounted cards). It holds everything perfect memory of public events gives
(every face-up pile's contents, the ``K_p``/``u_p`` knowledge of spec 7.5), so agents need no memory.
The mask is all zeros for every agent not to act and for everyone once the episode is over;
``infos[agent]["action_mask"]`` is the same.

Rewards
-------
=========================  ===========================================================================
end of game, winner set W  ``w = |W|``: ``(N - w)/(N - 1)`` to each winner, ``-w/(N - 1)`` to the
                           others (sole winner +1; 2-player draw 0/0; all drawn: 0 each)
elimination                an eliminated player leaves the game at once (PettingZoo dead-agent
                           convention: ``terminations`` true, removed by its ``step(None)``). It is
                           paid then: ``-1/(N - 1)`` (its final reward whenever the game ends with a
                           sole winner), shared equally by the players still in the game. At the end
                           the players still present get their target total minus what they already
                           received: a winner ``(|R| - w)/(N - 1) + |E|/((N - 1) w)``, a loser
                           ``-w/(N - 1)`` (``R`` present, ``E`` eliminated earlier). This equals the
                           spec's section 9 except after an early elimination followed by a draw
                           (see RULES.md); every step and every episode is zero-sum.
truncation (``max_rounds``)  all agents truncated; ``"most_cards"``: W = most cards held, as above;
                           ``"card_share"``: ``N/(N - 1) (c_p / C - 1/N)`` (present players)
shaping ``lambda > 0``     end of every round: ``lambda N/(N - 1) (s_p - s'_p)``, ``s_p`` = share of
                           the cards held, paid to every agent still in the game (zero-sum)
=========================  ===========================================================================

Options (``env(**options)``)
----------------------------
=========================  ================  =====================================================
option                     default           meaning
=========================  ================  =====================================================
``num_players``            ``2``             ``N``, 2..6
``jokers``                 ``False``         add ``X1``, ``X2``; a joker is worth ``jv`` (R20)
``joker_initial_value``    ``1``             ``jv`` before any round is won, 1..14 (1 = below a 2)
``retire_lowest_on_flip``  ``False``         every recycle retires the next rank, from 2s up (R21)
``retire_max_rank``        ``10``            highest rank value retirement can reach, 2..13
``cease_fire``             ``False``         two players left and one stuck at a war: draw (R10.1)
``first_leader``           ``0``             seat leading round 1; ``None`` = random
``hand_size``              ``5``             hand limit, 1..10
``war_facedown_count``     ``3``             face-down cards per war level, 0..5
``max_rounds``             ``1000``          truncate after this many rounds; ``None`` = no limit
``truncation_scoring``     ``"most_cards"``  or ``"card_share"`` (R19)
``shaping_weight``         ``0.0``           per-round card-share shaping ``lambda`` (>= 0)
``shuffle_mid_game``       ``True``          test hook: ``False`` keeps recycles and the last-card
                                             tie deal in chronological order (R23)
``render_mode``            ``None``          ``"ansi"`` (text), ``"human"`` (prints it) or ``"rgb_array"``
``render_seat``            ``None``          ``"rgb_array"``: draw this seat's view; ``None``: every hand up
``keep_eliminated``        ``False``         env option: a knocked-out player stays in ``env.agents``
                                             (no decisions, zero mask, rewards still reported) until the
                                             game ends, then steps ``None`` once (the spec's convention);
                                             for Tianshou and TorchRL (see below)
=========================  ================  =====================================================

Elimination and RL libraries: by default a knocked-out player leaves at once (PettingZoo's dead-agent
convention, what RLlib's ``PettingZooEnv``, SuperSuit and PettingZoo's tests expect). Tianshou's
``PettingZooEnv`` ends the whole episode at the first termination and TorchRL's ``PettingZooWrapper``
fails when an agent leaves early: with 3+ players, use ``keep_eliminated=True`` there. The rewards are
the same either way (the elimination payment arrives with the player's final ``last()``).

Reset options: ``seed``; ``options={"deck": [codes]}`` stacks the deck (index 0 = top; any subset of
distinct cards, jokers only with ``jokers=True``; card ``i`` goes to ``player_{i mod N}``, the first
card a player receives is the top of their pile, the ``D mod N`` last cards are set aside). Other
keys raise ``ConfigError`` naming the valid ones
(except ``"options"``, PettingZoo's ``api_test`` probe, which is ignored).

Rendering
---------
===============  ====================================================================================
``render_mode``  ``env.render()`` returns
===============  ====================================================================================
``"rgb_array"``  an ``H x W x 3`` uint8 picture (W = 960; extra ``render``): this round's cards, the war
                 by level, retired cards, and each seat's hand, face-down pile (a count) and face-up
                 pile. Every hand and buried card face up, or with ``render_seat=k`` ``player_k``'s
``"ansi"``       the table as text, every hand shown (``"human"`` prints it at every reset and step)
===============  ====================================================================================

Engines
-------
================================  =========================================================================
engine                            use it for
================================  =========================================================================
Python engine (``rules.py``)      this env, the agents, search and evaluation: the reference implementation
                                  of the spec
JAX engine (``card_envs.jax``)    ``card_envs.jax.make("battlecards_v0", **options)``, a ``pgx.Env``:
                                  thousands of games at once under ``jax.jit(jax.vmap(...))`` (extra
                                  ``card-envs[jax]``); the same observation, action ids, legal masks and
                                  rewards, every option; ``from_state`` converts any position of this
                                  engine (``card_envs/jax/battlecards.py`` documents its state arrays)
================================  =========================================================================

Version history
---------------
======  ===========================================================================
v0      first release: spec R1-R25, all options of section 6, 533-entry observation
======  ===========================================================================
"""

from __future__ import annotations

from card_envs.battlecards.rules import Battlecards
from card_envs.core.aec import CardGameEnv, make_env_functions


class BattlecardsEnv(CardGameEnv):
    __doc__ = __doc__
    game_class = Battlecards


env, raw_env = make_env_functions(BattlecardsEnv)
