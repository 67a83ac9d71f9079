"""`python -m agentenv_webarena.run`: the WebArena benchmark CLI (`agentenv_webarena.webarena.run`)."""
import sys

from agentenv_webarena.webarena.run import main

if __name__ == "__main__":
    sys.exit(main())
