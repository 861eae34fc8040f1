"""One table as it runs on this laptop: the runner that drives a seat's `protocol.table` session over
the mesh, the clock and the journal (runner.py), hosting, joining and resuming tables (tables.py),
and the optional trace of what a seat did (trace.py)."""
