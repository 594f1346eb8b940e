"""Running a tournament: the schedule of game pairs, the jobs built from it, the scheduler
that plays them, the openings, the standings and SPRT, and the single writer.

Imports the config, the store, books, the game layer, the protocol and stats; never the
report, the CLI or the Dask room (`runner.cluster`, above it). `run` holds the `Tournament`;
`scheduler` is all it knows of how games run, `jobs` the queue every scheduler takes from.
"""
