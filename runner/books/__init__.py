"""Opening books: EPD, PGN and Polyglot files, and the cursor that deals their openings out.

Holds readers that turn a book into start positions. Imports the rules core and the PGN
reader; never a game, an engine, the store or the tournament.
"""
