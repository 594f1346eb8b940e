"""The bundled CECP chess engine (`python -m engine`), built on the rules core runner.rules."""
