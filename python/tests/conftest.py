import os
import sys

HERE = os.path.dirname(__file__)
# The example sharders are what the tests check; they import as plain modules, one per layout
# (python/examples/layouts/ID.py). The tests about one layout (layouts/ID_test.py) and the
# generic ones share the helpers beside this file (layout_kinds).
sys.path.insert(0, os.path.join(HERE, "..", "examples", "layouts"))
# The example CP attentions (python/examples/attention/NAME.py), which check_attention's rank
# processes import by name as well (they start with this sys.path).
sys.path.insert(0, os.path.join(HERE, "..", "examples", "attention"))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "logprobs"))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "mtp"))
sys.path.insert(0, HERE)
# Where cplab is installed its entry point has registered the plugin under this same name, and
# pytest then skips it here.
pytest_plugins = ["cplab.pytest_plugin"]
