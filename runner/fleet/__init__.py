"""Remote workers: a service hands batches of game pairs to ``runner worker join`` machines
over HTTP(S) and takes their games back (runner.fleet.scheduler, runner.fleet.hub); the
worker's side is runner.fleet.client."""
