"""Tuning: the pure arithmetic of parameter tuning by self-play (SPSA), no engine and no store."""
