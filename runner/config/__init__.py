"""Tournament configuration: the typed, frozen model, read from TOML and checked, and its JSON.

One representation of a tournament description, shared by the CLI, the tournament, the store
(as JSON) and the report: `model` (dataclasses, enums, `to_json`/`from_json`), `parse` (a
tournament table into the model), `engines` (engine tables and program lookup) and `check`
(collecting every problem). It may import the layers below it (protocol types such as
`Variant`, the clock); never the tournament, the report or the CLI.
"""
