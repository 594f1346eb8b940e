"""Reports over stored games: standings, Elo, pentanomial figures, SPRT; text, JSON and HTML.

Reads through the store's queries and computes with `runner.stats`; never imports the
tournament or the CLI.
"""
