"""Play against any agent, watch agents play, replay saved games: a local web table and a terminal table.

    card-envs play --game revolutionary_war_v0 --opponents heuristic:endgame
    card-envs play --game bloodlines_v0 --watch heuristic:defender heuristic:aggressor
    card-envs play --replay FILE          # a game saved by --save-games (match, evaluate)
    card-envs play --game revolution_v0 --opponents random --ui terminal

====================  ==========================================================================================
module                what it holds
====================  ==========================================================================================
``__main__``          the command line (``--game --config --seat --opponents --watch --replay --ui --host --port
                      --seed --delay --save-games``)
``tables``            the tables, plain Python: :class:`~agents.play.tables.PlayTable` (a person against agents,
                      every request checked), :class:`~agents.play.tables.WatchTable` (frames of a watched or
                      saved game), :class:`~agents.play.tables.Tables` (one per browser tab)
``layout``            the board as JSON-safe data, the one picture the page and the terminal draw
``<game>``            one module per game: ``board`` (views to a board), ``status``, ``narrate`` (the log in
                      words), ``opening``, ``result``; each reads views only, never a state
``server``            the FastAPI app and its JSON API (extra ``play``); ``static/`` the page (HTML, CSS, JS; no
                      external assets)
``terminal``          the rich terminal table
====================  ==========================================================================================

No leaks by construction: every board, log line and legal-move list sent to a person is built from
``state.view(seat)`` of their seat (or, watching, from the views of the seats shown), and the deal seed
never leaves the server while a game is played. Needs the extra ``play`` (``pip install card-envs[play]``);
``agents.play.tables`` and the game modules need nothing beyond the core.
"""
