"""Remote workers: a service hands batches of game pairs to ``runner worker join`` machines
over HTTP(S) and takes their games back (runner.fleet.scheduler, runner.fleet.hub); the
worker's side is runner.fleet.client."""

WIRE_VERSION = 4
"""The version of what a worker and the service exchange (its registration, the jobs, the games
it returns). Both sides must speak the same one: a worker of another version is refused when it
registers, with both numbers, instead of failing on the first batch it cannot read. Raised when
either side changes incompatibly (2: engine option values typed, not text; 3: a heartbeat
says which games the worker started, and the answers to heartbeats and uploads say when
the run winds down; 4: the engines' own bench speeds registered, and each job's factor in a
batch)."""
