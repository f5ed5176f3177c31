"""Coverage-guided fuzzing of the parsers that read untrusted input (`make fuzz`).

    uv run --frozen --group fuzz python -m hack.fuzz [--runs N] [--target T ...]

Each target is a module here with `one_input(data: bytes) -> None`, which turns the fuzzer's
bytes into an input for one entry point and checks its promises: the only exceptions are the
errors it declares, and whatever it accepts keeps the invariants its docstring states (nothing
written outside the destination, round trips give back what went in). Any other exception is a
finding. Targets import nothing from atheris, so the unit tests replay saved findings and seed
inputs through the same `one_input` without the fuzzer installed; `_run` wraps a target in atheris
(libFuzzer) in a child process, and `__main__` runs the targets and prints their figures.
"""

TARGETS = ("semver_ranges", "fbc_streams", "image_layers", "registryv1", "secret_packing")
"""Every target module, in the order the runner fuzzes them."""
