"""OLM's releases: the version git tags give (`version`), the checkout it is built from (`source`)
and the artifacts `make release` writes (`artifacts`). docs/dev/release.md."""
