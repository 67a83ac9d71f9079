"""WebArena task ids -> verl interaction parquet (see multiturn_w_interaction.py for the format)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multiturn_w_interaction import main  # noqa: E402

if __name__ == "__main__":
    main("webarena")
