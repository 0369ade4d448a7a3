"""Console entrypoints; each is a thin layer over settings, a server and a transport."""
