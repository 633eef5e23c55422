import os
import sys

HERE = os.path.dirname(__file__)
# The example sharders are what the tests check; they import as plain modules, one per layout
# (python/examples/layouts/ID.py). The tests about one layout (layouts/ID_test.py) and the
# generic ones share the helpers beside this file (layout_kinds).
sys.path.insert(0, os.path.join(HERE, "..", "examples", "layouts"))
sys.path.insert(0, HERE)
# cplab's pytest plugin (the cplab_cases fixture) comes from its entry point where cplab is
# installed, and from `-p cplab.pytest_plugin` where the build folder is on PYTHONPATH
# (scripts/test): a conftest that named it too would register it twice.
