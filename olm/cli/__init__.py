"""olmctl, the command-line client (also installed as the kubectl plugin `kubectl-olm`).

At the root, what every command shares:

- `main`: the whole command line, built from each family's parsers, and the dispatch to the
  command that runs;
- `commands`: what a command is to `main` (a `Handler` naming its function, imported only when it
  runs), its exit codes and `CommandFailed`;
- `session`: running a command against the cluster (the API client, the way to catalogd) and
  mapping its failures to exit codes;
- `parsing`: the flags and subcommand parsers every family builds on; `render`: tables, JSON, YAML.

The commands, by family, each a package with a `parsers` module (all that `--help` loads) and the
modules its commands run:

- `catalogs`: `catalog add|update|remove|list`, and reading catalog content from outside the cluster;
- `packages`: `search`, `package show|versions|graph`, the upgrade graph and upgrade paths;
- `extensions`: `install`, `upgrade`, `list`, `uninstall`, with their plan, preview and progress;
- `rbac`: `rbac`, the least-privilege RBAC of an installer;
- `status`: `status`, what an extension waits for and what to do next.
"""
