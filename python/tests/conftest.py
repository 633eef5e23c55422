import os
import sys

# The example sharders are what the tests check; they import as plain modules.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

pytest_plugins = ["cplab.pytest_plugin"]
