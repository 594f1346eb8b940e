"""Running a tournament: the schedule of game pairs, the slots that play it, the single writer.

Imports the config, the store, books, the game layer and stats; never the report or the CLI.
"""
