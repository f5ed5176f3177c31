"""olmctl's extension commands: previewing, installing, upgrading, listing and removing
ClusterExtensions.

- `parsers`: the command line of `install|upgrade|list|uninstall`, and the source and pull flags
  `rbac` shares (what `--help` loads);
- `install`, `upgrade`, `listing` (`list`), `uninstall`: the commands;
- `plan`: what installing or upgrading would do, computed with the install pipeline
  operator-controller runs; `watchnamespace`: the advice when a bundle needs a namespace to watch;
- `preview`: the plan for people and scripts, and why it would not proceed;
- `progress`: waiting for an extension, with its conditions on stderr.
"""

from olm.cli.extensions.parsers import COMMANDS, add_commands

__all__ = ["COMMANDS", "add_commands"]
