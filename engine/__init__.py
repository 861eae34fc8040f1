"""Pure rules of the lanplay games: no I/O, no clocks, no randomness but what is passed in."""
