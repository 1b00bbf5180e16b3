"""python -m culeak: the culeak command (_culeak_command.py, beside the package)."""
import sys

from _culeak_command import main

sys.exit(main())
