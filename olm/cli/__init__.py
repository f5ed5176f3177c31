"""olmctl, the command-line client (also installed as the kubectl plugin `kubectl-olm`).

`main` parses the command line and maps failures to exit codes; `commands` runs each command;
`content` reads a ClusterCatalog's whole content (advertised URL, else the API server's service
proxy); `summary` and `render` are the pure logic behind what is printed.
"""
