"""PGN in and out: a streaming reader that replays games through the rules core, a writer.

Imports only the rules core.
"""
