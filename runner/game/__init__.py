"""One game: its job and description, the referee loop between two engines, adjudication,
and the game's record.

Imports the rules core, the clock, the protocol's `Engine` interface and the PGN writer;
never the store, the tournament, books or the CLI. It formats no protocol string.
"""
