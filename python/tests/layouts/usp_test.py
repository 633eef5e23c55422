"""usp: its registry entry (its options)."""
import cplab


def test_layouts_name_every_layout_with_its_rows_and_options():
    layouts = {entry["name"]: entry for entry in cplab.layouts()}
    assert layouts["usp"]["options"] == ["ring_degree"]
