"""Engine protocols over asyncio subprocess pipes: CECP and UCI behind one `Engine` interface.

The room holds the interface (`engine`), the process under a client (`transport` is what a
client needs, `process` spawns and stops, `reading` cuts stdout into bounded lines), the
lifecycle both clients share (`pipe`), each protocol's client and pure wire code
(`cecp`, `cecp_features`, `cecp_commands`, `cecp_dialogue`, `cecp_parse`; `uci`,
`uci_parse`), `echo` (the lines exchanged, echoed as they pass), and `factory`, which picks a
client by the configured protocol.

It may import only `runner.clock`, `runner.rules` and `runner.text`: never the game loop, the
store, the configuration or anything above them, and never python-chess.
"""
