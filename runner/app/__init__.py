"""The application layer: the verbs the command line and the service translate into.

`lifecycle`: start (new, continue, force, the same words again) with the one "finished /
settings changed" rule, and resume; `modes`: the start modes and which database a run
uses; `reading`: the list and PGN export with filters; `report`: the report; `play`: one
game outside any tournament (on a game slot, with no store). The others work over
the store object (`runner.store.Store`), so the adapters import no ORM model and no query.
Nothing is re-exported here: a command imports only the verbs it runs.
"""
