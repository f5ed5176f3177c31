"""Tests of catalogd pieces that need no cluster: index, storage, unpack, HTTP semantics."""
