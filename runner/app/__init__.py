"""The application layer: the verbs the command line and the service translate into.

`run`: play a tournament (where its games run, the engines' protocols, the finished rule,
taking it, the stop policy, failures as outcomes with exit status), the one sequence under
every front door; `signals`: the stop policy; `protocols`: asking engines their protocol;
`lifecycle`: start (new, continue, force, the same words again) with the one "finished /
settings changed" rule, and resume; `stop`: stop soft or hard, or mark a stored tournament
stopped; `modes`: the start modes and which database a run uses; `reading`: the list and PGN
export with filters; `report`: the report; `play`: one game outside any tournament (on a
game slot, with no store). The others work over the store object
(`runner.store.store.Store`), so the adapters import no ORM model and no query (a contract in
pyproject.toml holds the CLI and the service to that module of the store).
Nothing is re-exported here: a command imports only the verbs it runs.
"""
