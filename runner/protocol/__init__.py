"""Engine protocols over asyncio subprocess pipes (CECP and UCI)."""
