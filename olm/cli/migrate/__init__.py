"""olmctl's `migrate`: OLM v0 installations moved to OLM v1 ClusterExtensions in place.

- `parsers`: the command line of `migrate` (what `--help` loads);
- `command`: the assessment, the plan it prints and the steps of the move;
- `assess`: whether an installation can move and the ClusterExtension it becomes (pure logic);
- `inventory`: v0's installations and the objects it made, read from the cluster;
- `v0`: OLM v0's kinds, labels and owner references, read as data (pure logic).
"""

from olm.cli.migrate.parsers import COMMANDS, add_commands

__all__ = ["COMMANDS", "add_commands"]
