"""Small, complete controllers built only on olm_runtime's public API, as starting points."""
