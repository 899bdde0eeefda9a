"""Everything that plays: the agent interface, random, the rule-based players of each game, ISMCTS, trained
models, and the registry that names them all.

=======================  ==========================================================================================
``base``                 :class:`Agent` (``act(decision)``), :class:`Decision` (the view, observation and mask of
                         one turn), :class:`RandomAgent`
``<game>``               the game's rule-based players: ``AGENTS`` (weakest first) and ``STRONGEST``
``ismcts``               information-set MCTS for every game (``ismcts:<options>``)
``checkpoint_file``      the checkpoint format, read with numpy only (the trainer writes it)
``checkpoint``           a checkpoint as a player (``checkpoint:<path>``)
``zoo``                  the shipped trained agents (``zoo:<game>/<name>``; ``card-envs zoo``)
``registry``             every agent by spec: :func:`~agents.players.registry.make_agent`, on top of the rest
=======================  ==========================================================================================

Nothing here imports ``agents.tournaments`` or ``agents.play``; only the registry imports the modules that
build agents by spec, and those that need other agents (an advisor, ISMCTS rollouts) are handed the
registry's ``make_agent``.
"""
