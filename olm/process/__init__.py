"""What catalogd and operator-controller share as processes: how they start, the flags they both take,
and the plumbing around their own wiring.

Each process's `main.py` declares its flags and wires its controllers; these modules do the rest:

- `main`: parse the flags, configure logging and tracing, read the testing seams, run the process's
  own part to its end and map the outcome to an exit code; `connect` opens the API client once the
  API server answers (`process.main(parser(), run, argv)`, `process.connect(args, ...)`);
- `flags`: the connection, leader-election, serving, registry-trust and logging flags both take,
  and what they configure (`flags.parse(parser, argv)`, `flags.manager_options(args)`,
  `flags.registry_options(args, ...)`);
- `featuregates`: `--feature-gates` with upstream's gates per process, and what each is here;
- `tlsflags`: `--tls-profile` and `--tls-custom-*`, read into a `tlsprofile.Profile` for every TLS
  server;
- `startup`: reaching the API server at start, or saying in one log line why not;
- `testing_seams`: the `OLM_TESTING_*` variables that let tests reach slow or rare paths quickly;
- `pullconfig`: the global pull Secret and the registry CAs, followed while the process runs;
- `tlsbuffers`: a smaller read buffer for every TLS connection of the process;
- `memory`: handing the memory a large parse freed back to the system.

This package imports nothing itself, so a module that needs one of them (olmctl classifying a
connection error with `startup`, the install pipeline calling `memory`) loads only that one.
Nothing here imports a process (`olm.catalogd`, `olm.operator_controller`), olmctl or the install
pipeline: checked by import-linter.
"""
