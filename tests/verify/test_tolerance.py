"""One tolerance for every verdict, by device and dtype, and the places that use it.

Expected values come from the documented rule (pp_demo.verify.tolerances' docstring and notebook
03): 1e-6 for fp32 on a CPU, 1e-5 for fp32 on a GPU, 1e-2 for bf16 and fp16."""

import pytest
import torch

from pp_demo.core import build_model
from pp_demo.ranks.in_process import fixed_pipeline
from pp_demo.verify.checker.judge import check_forward
from pp_demo.verify.tolerances import tolerance


@pytest.mark.parametrize(
    "device, dtype, expected",
    [
        ("cpu", torch.float32, 1e-6),
        ("cuda", torch.float32, 1e-5),
        (torch.device("cuda", 0), torch.float32, 1e-5),
        ("cpu", torch.bfloat16, 1e-2),
        ("cuda", torch.bfloat16, 1e-2),
        ("cpu", torch.float16, 1e-2),
    ],
)
def test_the_tolerance_by_device_and_dtype(device, dtype, expected):
    assert tolerance(device, dtype) == expected


def test_every_tolerance_is_far_below_the_bugs_smallest_difference():
    # the tiny fp32 models' wrong-token differences start near 0.05; fp32 bounds must sit
    # orders of magnitude below it (half precision's 1e-2 is judged with half-precision models only)
    assert max(tolerance(d, torch.float32) for d in ("cpu", "cuda")) <= 0.05 / 1000


def test_the_checker_defaults_to_the_shared_tolerance():
    report = check_forward(build_model("llama"), fixed_pipeline, lengths=(5,), batch_sizes=(2,))
    assert report.atol == tolerance("cpu", torch.float32)
    assert report.passed
