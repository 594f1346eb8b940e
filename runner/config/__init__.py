"""Tournament configuration: the typed, frozen model, read from TOML and checked.

One representation of a tournament description, shared by the CLI, the tournament and the
report. It may import the game layer's types (engine and adjudication settings) and the
clock; never the store, the tournament, the report or the CLI.
"""
