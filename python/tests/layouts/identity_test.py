"""identity: its registry entry (CP off: the one layout whose entry says cp_off)."""
import cplab


def test_layouts_name_every_layout_with_its_rows_and_options():
    layouts = {entry["name"]: entry for entry in cplab.layouts()}
    assert {name for name, entry in layouts.items() if entry["cp_off"]} == {"identity"}
