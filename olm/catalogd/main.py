"""Entry point of `catalogd`. Reserved: the issue that builds this process replaces it."""

import sys


def main() -> int:
    print("catalogd: not implemented yet", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
