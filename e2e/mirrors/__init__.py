"""registries.conf mirrors: catalogs and bundles named under a registry that does not exist here,
pulled through mirrors by a catalogd and an operator-controller of this directory's own."""
