"""The `runner` command line: Typer commands, the cutechess vocabulary, live views.

The top layer: it may import every other room, and nothing of ours imports it. Commands
translate words into the typed config and hand it to the tournament, the report or the store.
"""
