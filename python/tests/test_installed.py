"""The module as users get it: it links no libtorch (tensors cross through DLPack), takes and gives
every dtype it promises, and — where scripts/test installed it with pip into a virtual
environment (CPLAB_EXPECT_INSTALLED=1) — runs from that environment, its case driver the one
installed beside it, its pytest plugin found through its entry point by a test file that has no
conftest."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
import torch

import cplab
import cplab.testing
from layout_kinds import a_plain_layout

INSTALLED = os.environ.get("CPLAB_EXPECT_INSTALLED") == "1"


def test_the_extension_links_no_libtorch():
    module = pathlib.Path(cplab._cplab.__file__)
    dynamic = subprocess.run(["readelf", "-d", str(module)], check=True, capture_output=True,
                             text=True).stdout
    needed = [line for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert needed, dynamic
    assert not [line for line in needed if "libtorch" in line or "libc10" in line], needed


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int64,
                                   torch.int32, torch.uint8, torch.bool])
def test_every_dtype_crosses_both_ways(dtype):
    layout = a_plain_layout()
    plan = cplab.plan(layout, 4, seq_len=16)
    assert plan["padded_seq_len"] == 16 and plan["real"].dtype == torch.bool
    values = (torch.arange(32).reshape(2, 16) % 5).to(dtype)
    # Strided views going in (every other element of a wider tensor): resolved on the way.
    shards = [torch.stack([values[:, plan["index"][r]]] * 2, dim=-1)[..., 0] for r in range(4)]
    assert not shards[0].is_contiguous()
    back = cplab.gather(shards, layout, 4, seq_len=16)
    assert back.dtype == dtype and torch.equal(back, values)


def test_lazy_views_cross_with_their_values():
    """A conjugate's imaginary part is a negative view (torch's lazy sign bit, which DLPack does
    not carry): its values must cross negated, as torch reads them."""
    layout = a_plain_layout()
    negated = torch.complex(torch.ones(2, 16), torch.arange(32.0).reshape(2, 16)).conj().imag
    shards = [negated[:, 4 * r:4 * r + 4] for r in range(4)]
    assert shards[0].is_neg() and shards[1].max() <= 0
    back = cplab.gather(shards, layout, 4, seq_len=16)
    plan = cplab.plan(layout, 4, seq_len=16)
    for r in range(4):
        assert torch.equal(back[:, plan["index"][r]], shards[r].clone()), (r, back)


def test_what_cannot_cross_is_one_error():
    layout = a_plain_layout()
    for bad, words in [(torch.zeros(2, 8, dtype=torch.float64), "torch.float64"),
                       (torch.zeros(2, 8).to_sparse(), "dense"),
                       ([0.0] * 8, "not a torch.Tensor")]:
        with pytest.raises(cplab.Error) as err:
            cplab.gather([bad] * 2, layout, 2, seq_len=16)
        assert words in str(err.value) and "\n" not in str(err.value)


@pytest.mark.skipif(not INSTALLED, reason="the build folder's module (scripts/test runs this "
                    "file again against the installed package)")
def test_the_installed_package_and_its_driver_are_the_ones_used(tmp_path):
    prefix = pathlib.Path(sys.prefix).resolve()
    assert sys.prefix != sys.base_prefix, "not in a virtual environment"
    package = pathlib.Path(cplab.__file__).resolve().parent
    assert prefix in package.parents, package
    driver = pathlib.Path(cplab.testing._DRIVER).resolve()
    assert driver.parent == package and os.access(driver, os.X_OK), driver
    # A user's test file, alone in a folder: no conftest, the plugin comes from the entry point.
    (tmp_path / "test_user.py").write_text(textwrap.dedent(f"""
        import cplab.testing

        def test_sharder(cplab_cases):
            cplab_cases.check_sharder(lambda batch, rank, size: cplab.shard(batch, "{a_plain_layout()}", size)[rank],
                                      "{a_plain_layout()}", cp=[1, 2])
        """))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "--cplab-cases", "5", str(tmp_path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout, run.stdout
