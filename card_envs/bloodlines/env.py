"""Bloodlines -- PettingZoo AEC environment.

A two-player duel by Paeter Frandsen (2010). Each player has a bloodline suit, whose J, Q and K
are their royals, and a private 36-card pile of number cards (2-10 of all four suits). Hearts
defend royals, spades form attacking units, clubs and diamonds are cycled for new cards; a clubs
bloodline draws many cards at once, a diamonds bloodline buys jokers that kill any royal or die
as decoys. Kill all three enemy royals to win. Full rules: ``card_envs/bloodlines/RULES.md``.

=====================  ==========================================================================
Import                 ``from card_envs import bloodlines_v0``
Agents                 ``player_0``, ``player_1``
Action space           ``Discrete(215)``
Observation space      ``Dict(observation=Box(float32, (485,)), action_mask=Box(0, 1, (215,), int8))``
=====================  ==========================================================================

Actions
-------
``c`` is a number card of the acting player, ``k(c) = 9 s + rank - 2`` (C=0, D=1, H=2, S=3),
``r`` a royal (J=0, Q=1, K=2), ``u`` a unit index (creation order, gaps close).

=========  ============================  ============================================================
index      name                          legal when (acting player X)
=========  ============================  ============================================================
0-17       ``cycle <c>`` (``cycle 3C``)  X's turn, ``STEP1``/``MAIN``; club or diamond c in hand;
                                         X's pile not empty. Index ``k(c)``
18-26      ``power <c>`` (``power 7C``)  as cycle, X is clubs, c a club. ``18 + rank - 2``
27-35      ``pool <d>`` (``pool 10D``)   X's turn, ``STEP1``/``MAIN``; X is diamonds; d in hand.
                                         ``27 + rank - 2``
36-71      ``discard <c>``               ``DISCARD`` (discards owed after the power); c in hand.
                                         ``36 + k(c)``
72-98      ``heart <h> on <J/Q/K>``      ``MAIN``; h in hand; own royal r alive.
                                         ``72 + 3 (rank - 2) + r``
99-107     ``new unit <s>``              ``MAIN``; spade s in hand. ``99 + rank - 2``
108-179    ``add <s> to unit <u>``       ``MAIN``; s in hand; u (0-7) < own units.
                                         ``108 + 8 (rank - 2) + u``
180-206    ``unit <u> attacks <J/Q/K>``  ``MAIN``; u (0-8) exists; enemy royal r alive; atk > def.
                                         ``180 + 3 u + r``
207-209    ``joker attacks <J/Q/K>``     ``MAIN``; X has a joker in play; enemy royal r alive
210        ``buy joker``                 ``MAIN``; X is diamonds; pool value >= ``joker_cost``;
                                         supply not empty
211        ``end step 1``                ``STEP1`` (then the step-2 draw)
212        ``pass``                      ``MAIN`` and (no main action legal, or ``allow_pass``)
213        ``decoy``                     ``DECOY``: X is the defender, out of turn
214        ``no decoy``                  ``DECOY``
=========  ============================  ============================================================

A resource action (cycle, power, pool) keeps the turn going; a main action (heart, unit, attack,
joker attack, buy) or ``pass`` ends it. With ``auto_skip_forced`` (default), a decision whose
only legal action is ``end step 1`` or ``pass`` is taken by the environment itself.

Observation
-----------
The layout table is in :mod:`card_envs.bloodlines.encoding` (485 entries; 0-411 are the spec's
vector, 412-484 the unseen sets and a to-decide flag). The mask is all zeros for the agent not to
act and for both agents once the episode is over; ``infos[agent]["action_mask"]`` is the same.

Rewards
-------
==================  =============================================================================
kill win            the player who discards the third enemy royal: +1, the other -1
stalemate           two consecutive idle turns (R15): terminated, scored by ``unfinished_result``
turn limit          turn ``max_turns`` ends: truncated, scored by ``unfinished_result``
shaping ``w > 0``   each royal actually killed: +w to its killer, -w to its owner (a decoy: 0)
==================  =============================================================================

``unfinished_result="royals"``: more surviving royals wins (+1/-1), equal is a draw (0/0);
``"draw"``: 0/0. All rewards are zero-sum and paid to both agents in the step that causes them.

Options (``env(**options)``)
----------------------------
=======================  ============  ==========================================================
option                   default       meaning
=======================  ============  ==========================================================
``bloodlines``           ``None``      (p0, p1) suits, e.g. ``("S", "H")``, different; ``None``:
                                       random (p0 uniform, p1 uniform among the other three)
``starting_player``      ``None``      0 or 1; ``None``: a coin flip (a match driver passes
                                       the previous loser, R18)
``hand_limit``           ``4``         initial hand, step-2 threshold, discard-down target (1-36)
``joker_cost``           ``25``        minimum pool value to buy a joker (>= 1)
``joker_supply``         ``2``         0, 1 or 2 jokers hireable by a diamonds bloodline
``allow_pass``           ``False``     ``pass`` always legal in ``MAIN`` (main action optional)
``auto_skip_forced``     ``True``      take forced ``end step 1``/``pass`` automatically (R11)
``max_turns``            ``200``       truncate when this turn ends; ``None``: no limit
``unfinished_result``    ``"royals"``  ``"royals"`` or ``"draw"``: scoring of stalemate/truncation
``shaping_weight``       ``0.0``       zero-sum reward per royal killed (>= 0)
``render_mode``          ``None``      ``"ansi"`` (text), ``"human"`` (prints it) or ``"rgb_array"``
``render_seat``          ``None``      ``"rgb_array"``: draw this seat's view; ``None``: both hands up
=======================  ============  ==========================================================

Reset options: ``seed``; ``options={"decks": [pile_0, pile_1]}`` stacks each player's draw pile
(index 0 = top, the first four are the hand): each entry ``None`` (shuffled) or a list of distinct
number-card codes (``"2C"`` .. ``"10S"``), possibly partial, the rest following in canonical order
``2C .. 10C 2D .. 10S``. Other keys (``deck`` too) raise
``ConfigError`` naming the valid ones (except ``"options"``, PettingZoo's ``api_test`` probe).

Rendering
---------
===============  ====================================================================================
``render_mode``  ``env.render()`` returns
===============  ====================================================================================
``"rgb_array"``  an ``H x W x 3`` uint8 picture (W = 960; extra ``render``): each seat's royals with the
                 hearts under them, units, diamond pool and jokers, hand, draw pile (a count) and
                 discard pile. Both hands face up, or with ``render_seat=k`` only ``player_k``'s
``"ansi"``       the table as text, every hand shown (``"human"`` prints it at every reset and step)
===============  ====================================================================================

Engines
-------
==========================================  =================================================================
engine                                      what it does
==========================================  =================================================================
``card_envs/bloodlines/rules.py`` (Python)  the reference rules engine behind this PettingZoo env, the agents,
                                            the evaluation harness and the trainer; stacked decks, views,
                                            ``sample_hidden`` for search
``card_envs.jax.make("bloodlines_v0")``     the same game in JAX on Pgx's ``Env`` API (optional extra
(``card_envs/jax/bloodlines.py``)           ``card-envs[jax]``) for batched play under ``jit``/``vmap``: the
                                            same 215 action ids, legal masks, 485-entry observations and
                                            per-step rewards, every option; one ``step`` per decision of this
                                            env (forced steps inside); deals from the ``init`` key;
                                            ``card_envs.jax.from_state`` converts any Python position, and
                                            ``card_envs.jax.lockstep`` checks the two agree decision by decision
==========================================  =================================================================

Version history
---------------
======  ===========================================================================
v0      first release: spec S1-S7, R1-R18, A1-A52, all options, 485-entry observation
======  ===========================================================================
"""

from __future__ import annotations

from card_envs.bloodlines.rules import Bloodlines
from card_envs.core.aec import CardGameEnv, make_env_functions


class BloodlinesEnv(CardGameEnv):
    __doc__ = __doc__
    game_class = Bloodlines


env, raw_env = make_env_functions(BloodlinesEnv)
