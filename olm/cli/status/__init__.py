"""olmctl's `status`: what an extension is, what it waits for, and what to do next.

- `parsers`: the command line of `status` (what `--help` loads);
- `explain`: the command, reading the extension, its revisions and its Events;
- `diagnosis`: the verdict (healthy, progressing, stuck) and the next step, as pure logic.
"""

from olm.cli.status.parsers import COMMANDS, add_commands

__all__ = ["COMMANDS", "add_commands"]
