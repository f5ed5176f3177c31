"""Entry point of `operator-controller`. Reserved: the issue that builds this process replaces it."""

import sys


def main() -> int:
    print("operator-controller: not implemented yet", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
