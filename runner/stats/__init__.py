"""Statistics of game results: Elo, error bars, LOS, pentanomial models, SPRT, ratings.

Pure functions over counts; imports nothing else of ours.
"""
