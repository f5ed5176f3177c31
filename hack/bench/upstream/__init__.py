"""`make bench-upstream`: ours against upstream OLM v1 built here."""
