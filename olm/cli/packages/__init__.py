"""olmctl's package commands: finding packages in the serving catalogs and drawing their upgrade graphs.

- `parsers`: the command line of `search` and `package show|versions|graph` (what `--help` loads);
- `commands`: `search`, `package show`, `package versions`; `graph`: `package graph`;
- `summary`: what is said about a package, from its typed catalog content; `text`: laid out for
  people;
- `upgradegraph`: the upgrade graph as data, drawn by `graphsvg` or `graphdot`; `upgradepath`: how
  an installed bundle gets to an upgrade target (`upgrade` shows it).
"""

from olm.cli.packages.parsers import COMMANDS, add_commands

__all__ = ["COMMANDS", "add_commands"]
