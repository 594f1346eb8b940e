"""The service: submit, watch and read tournaments over HTTP (``runner serve``).

One process owns the tournaments it runs (through the same `Tournament` and scheduler as the
CLI) and the single database writer; a FastAPI app gives the JSON API, the Server-Sent Events
stream and the web page. Layout: `settings` (what the operator chose), `submission` (a
submitted configuration checked against the engine allow-list), `hub` (each tournament's
event log and its subscribers), `manager` (running, stopping, resuming), `security` (token,
body size, rate limit), `api` (the JSON routes), `page` (the HTML page), `app` (the factory),
`server` (serving it: checks, connection caps, shutdown).
"""
