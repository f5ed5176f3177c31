"""olmctl's `rbac`: the least-privilege RBAC an installer ServiceAccount needs for a package.

- `parsers`: the command line of `rbac` (what `--help` loads);
- `command`: the command, planning each `--version` as `install` would;
- `leastprivilege`: the RBAC derived from the objects a bundle renders to (pure logic).
"""

from olm.cli.rbac.parsers import COMMANDS, add_commands

__all__ = ["COMMANDS", "add_commands"]
