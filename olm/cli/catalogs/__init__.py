"""olmctl's catalog commands and its access to catalog content.

- `parsers`: the command line of `catalog add|update|remove|list` (what `--help` loads);
- `commands`: `add`, `update` and `remove`; `listing`: `list`;
- `source`, `content`: reaching catalogd from outside the cluster (the advertised URL, else the API
  server's service proxy) and parsing a catalog's whole content as the resolver does;
- `serving`: the content of every serving catalog, read together (`catalog list`, `search`,
  `package ...`).
"""

from olm.cli.catalogs.parsers import COMMANDS, add_commands

__all__ = ["COMMANDS", "add_commands"]
