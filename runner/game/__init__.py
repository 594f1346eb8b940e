"""One game: its job and description, the referee loop between two engines, adjudication,
the game's record, and the slot that plays jobs one after another with the engines it keeps.

Imports the rules core, the clock, the protocol's `Engine` interface and the PGN writer;
never the store, the tournament, books or the CLI. It formats no protocol string.
"""
