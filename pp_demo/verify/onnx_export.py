"""The pooling rules and the last stage exported to ONNX and run with onnxruntime.

The first-pad rule keeps ``% L`` "for ONNX": it turns the ``-1`` of an unpadded or
left-padded row into ``L - 1``, because the legacy TorchScript exporter lowers
``hidden[arange(B), positions]`` to a gather over flattened indices, where a negative
position reads *another row's* token (it warns so while exporting). The fix never
returns a negative position, so it needs no modulo and exports with either exporter.
Needs the ``onnx`` extra (onnx, onnxscript, onnxruntime), imported lazily so the core
package does not.
"""

import contextlib
import io
import os
from collections.abc import Sequence

import torch
from torch import nn

from pp_demo.core import get_rule
from pp_demo.silent_imports import import_quietly, quiet

__all__ = ["PooledRows", "export_onnx", "run_onnx", "EXPORTERS"]

EXPORTERS = ("dynamo", "torchscript")


class PooledRows(nn.Module):
    """``hidden[arange(B), rule(input_ids)]``: the pooling step of the last stage alone."""

    def __init__(self, rule: str, pad_token_id: int = 0) -> None:
        super().__init__()
        self.rule, self.pad_token_id = get_rule(rule).name, pad_token_id

    def forward(self, hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
        positions = get_rule(self.rule).fn(input_ids, self.pad_token_id)
        return hidden[torch.arange(hidden.shape[0], device=hidden.device), positions]


def export_onnx(
    module: nn.Module,
    example_args: Sequence[torch.Tensor],
    path: "str | os.PathLike[str]",
    exporter: str = "dynamo",
    names: list[str] | None = None,
) -> "str | os.PathLike[str]":
    """Export ``module`` with every input's first two axes (batch, length) dynamic.

    ``exporter``: ``"dynamo"`` (torch.export based, the default since torch 2.9) or
    ``"torchscript"`` (the legacy tracer, where the question of the modulo arose).
    """
    if exporter not in EXPORTERS:
        raise ValueError(f"unknown exporter {exporter!r}; use one of {', '.join(EXPORTERS)}")
    names = names or [f"input{i}" for i in range(len(example_args))]
    module = module.eval()
    # the exporters log to stderr with timestamps and process ids, print progress to stdout and
    # warn about tracing; none of it belongs in a notebook's stored output
    with quiet(), contextlib.redirect_stdout(io.StringIO()), torch.no_grad():
        if exporter == "dynamo":
            batch, length = torch.export.Dim("batch"), torch.export.Dim("length")
            program = torch.onnx.export(
                module,
                tuple(example_args),
                dynamo=True,
                verbose=False,
                input_names=names,
                dynamic_shapes=tuple({0: batch, 1: length} for _ in example_args),
            )
            assert program is not None  # dynamo=True returns the program
            program.save(str(path))
        else:
            torch.onnx.export(
                module,
                tuple(example_args),
                str(path),
                dynamo=False,
                input_names=names,
                dynamic_axes={name: {0: "batch", 1: "length"} for name in names},
            )
    return path


def run_onnx(path: "str | os.PathLike[str]", *args: torch.Tensor) -> torch.Tensor:
    """Run an exported file with onnxruntime on the CPU; returns the first output as a tensor."""
    # quietly: its import can print from C code on some CPUs (a cpuinfo probe), failing strict nbval
    onnxruntime = import_quietly("onnxruntime")

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: its warnings go to stderr
    session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feeds = {i.name: a.detach().cpu().numpy() for i, a in zip(session.get_inputs(), args, strict=True)}
    return torch.from_numpy(session.run(None, feeds)[0])
