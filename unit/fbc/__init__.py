"""Tests of olm.fbc: parsing, YAML semantics, .indexignore, typed views, validation, real catalogs."""
