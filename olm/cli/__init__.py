"""olmctl, the command-line client."""
