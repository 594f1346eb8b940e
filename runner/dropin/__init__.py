"""Drop-in entry points: fastchess's and cutechess-cli's command lines on the runner.

`contract` holds the types a peer's package (``runner.dropin.fastchess``,
``runner.dropin.cutechess``) fills: its ``parse(argv)`` turns the peer's command line into a
`DropinRun` (or an `Immediate` answer, or raises `PeerUsageError`), and the run's
`PeerOutput` prints and writes what the peer would. `driver` plays the run through the
application layer; `main` is the console scripts' entry. Nothing is imported here, so that
a drop-in's start-up pays only for what it uses.
"""
