"""``python -m neomx.compat script.py [args]``: run an MXNet script on neomx."""
import sys

from . import main

sys.exit(main(sys.argv[1:]))
