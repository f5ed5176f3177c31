"""Demo content for `make run`: a small File-Based Catalog under `catalog/`."""
