"""The `catalogd` process."""
