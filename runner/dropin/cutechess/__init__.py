"""cutechess-cli 1.5's command line and output, as the `runner-cutechess` entry point speaks them."""
