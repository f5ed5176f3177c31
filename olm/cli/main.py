"""Entry point of `olmctl`. Reserved: the issue that builds this process replaces it."""

import sys


def main() -> int:
    print("olmctl: not implemented yet", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
