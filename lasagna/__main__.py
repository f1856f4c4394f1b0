"""`python -m lasagna`: the `lasagna` console script (`lasagna.cli:main`)."""

import sys

from lasagna.cli import main

if __name__ == "__main__":
    sys.exit(main())
