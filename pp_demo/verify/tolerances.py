"""How far logits may be from ``model.forward`` and still count as the same: one rule for every
verdict of the workbook (the comparison, the matrix, the checker and the CLI).

fp32 on a CPU: 1e-6 (a pipeline runs ``model.forward``'s arithmetic; scoring one pooled
position instead of every position moves logits by about 1e-7 at most). fp32 on a GPU: 1e-5
(kernels may reduce in another order). bf16 and fp16: 1e-2. The tiny models' logits are under 1
in size, where one bf16 step (8 significant bits) is at most 2**-8, about 4e-3, and one fp16
step (11 bits) 8 times less; the same forward computed in another order lands a step or two
apart. 1e-2 keeps every verdict of fp32 in both (tests/verify/test_precision.py); larger logits
have larger steps: ``check --atol``. Every bound sits below the pooled-token bug's differences
(0.047 and up on the tiny models, in half precision too): a wrong pooled position is never
within it, nor within a tolerance given by hand (``check_separates`` bounds it by the battery's
nearest other position).
"""

import torch

from pp_demo.errors import BadInput

__all__ = ["tolerance", "DTYPES", "dtype_named", "check_separates"]

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
"""The precisions a run can be asked for by name (``--dtype``), fp32 the default."""


def tolerance(device: "str | torch.device", dtype: torch.dtype = torch.float32) -> float:
    """The largest max |logit difference| that still counts as a match, by device and dtype."""
    if dtype in (torch.bfloat16, torch.float16):
        return 1e-2
    return 1e-6 if torch.device(device).type == "cpu" else 1e-5


def dtype_named(name: "str | torch.dtype") -> torch.dtype:
    """``"bf16"`` -> ``torch.bfloat16``: a precision of ``DTYPES`` by its option name, torch's own name
    (``"bfloat16"``, ``"torch.bfloat16"``) or itself. Every command and function that takes a dtype
    reads it here, so an unknown one gets the same line everywhere."""
    if isinstance(name, torch.dtype) and name in DTYPES.values():
        return name
    torch_names = {str(dtype).removeprefix("torch."): dtype for dtype in DTYPES.values()}
    if isinstance(name, str) and (name in DTYPES or name.removeprefix("torch.") in torch_names):
        return DTYPES.get(name) or torch_names[name.removeprefix("torch.")]
    raise BadInput(f"unknown precision {name!r}; use one of {', '.join(DTYPES)}")


def check_separates(atol: float, separation: float, logit_size: float, dtype: torch.dtype) -> None:
    """Refuse an ``atol`` at or above ``separation`` (the smallest max |logit difference|
    between the reference's logits and another position's on the battery): a forward
    pooling there would pass. The refusal suggests two steps of each precision at
    ``logit_size`` (the largest |logit|)."""
    if atol < separation:
        return
    steps = ", ".join(
        f"{name} {2 * max(logit_size, 1e-3) * torch.finfo(kind).eps:.1g}" for name, kind in DTYPES.items()
    )
    ours = next((name for name, kind in DTYPES.items() if kind == dtype), str(dtype))
    raise BadInput(
        f"atol {atol:g} would let a wrong pooled position pass: on this battery the nearest other position's "
        f"logits differ from the reference's by {separation:.3g}; give an atol below that. The logits here are up "
        f"to {logit_size:.3g} in size, where two steps of each precision are: {steps} (the model runs in {ours})"
    )
