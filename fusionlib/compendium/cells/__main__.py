"""``python -m fusionlib.compendium.cells list|run|plan|...``: the command line of the grid of
cells (:func:`fusionlib.compendium.cells.cli.main`).

Part of the cell machinery (:mod:`fusionlib.compendium.cells`); left out of every code key.
"""

import sys

from fusionlib.compendium.cells.cli import main

if __name__ == "__main__":
    sys.exit(main())
