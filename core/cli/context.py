"""What a command needs: the application (`tactful.core.app.App`: config, home, people, the
plugin host, the gate), plus what only the command line knows (`--debug`).

The command line builds it and hands it on as an `App`: routines, the scheduler and the services
`tactful run` starts take an `App` and never import the command line.
"""

from __future__ import annotations

from dataclasses import dataclass

from tactful.core.app import App


@dataclass
class Context(App):
    debug: bool = False  # --debug: show the traceback of an internal error
