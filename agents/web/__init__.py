"""The web table (``mtrain serve``, the ``web`` extra): a replay viewer and play against agents.

:mod:`~agents.web.app` builds the FastAPI app, :mod:`~agents.web.games` holds the games
against agents, :mod:`~agents.web.replays` turns replay files into frames,
:mod:`~agents.web.tables` builds the table JSON a page receives (one seat's view, or every
hand for a replay), :mod:`~agents.web.schemas` the request bodies, :mod:`~agents.web.limits`
the body-size cap, :mod:`~agents.web.cli` the command. The pages are the static files of
``agents/web/static``. This package imports FastAPI only in the modules that need it, so
``mtrain --help`` works without the ``web`` extra.
"""
