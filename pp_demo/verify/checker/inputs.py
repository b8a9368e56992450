"""What the checker accepts, checked before anything runs: one line (``BadInput``) per mistake.

The Python API and ``python -m pp_demo check`` share these checks (both refuse a value with the
same sentence), and nothing wrong reaches torch as a traceback. Only pp_demo's own inputs are
judged here; what the user's callable does is a verdict of the checker, never a ``BadInput``.
"""

import importlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from pp_demo.bounds import MAX_BATCH_SIZE, MAX_LENGTH, MAX_MICRO_BATCHES, count_value
from pp_demo.core import check_pad_id
from pp_demo.errors import BadInput
from pp_demo.ranks.validate import check_device
from pp_demo.verify.checker.batches import named_length
from pp_demo.verify.checker.worker import describe_exception

__all__ = ["CallableImportFailed", "ATTENTION_IMPLEMENTATIONS", "checker_device"]
__all__ += [
    "check_attention",
    "check_sizes",
    "check_model",
    "fit_lengths",
    "as_callable",
    "load_callable",
    "load_model",
]

ATTENTION_IMPLEMENTATIONS = ("eager", "sdpa")


class CallableImportFailed(RuntimeError):
    """The user's module was found but raised while it was imported: their code, not a usage error."""


def checker_device(device: "str | torch.device") -> str:
    """A device this torch can compute on (``pp_demo.ranks.validate.check_device``, the one check of
    a device), as text; of those, the checker runs on cpu and cuda."""
    text = check_device(str(device))
    if torch.device(text).type not in ("cpu", "cuda"):
        raise BadInput(f"device {text!r}: the checker runs on cpu or cuda")
    return text


def check_attention(name: str | None) -> None:
    if name is not None and name not in ATTENTION_IMPLEMENTATIONS:
        raise BadInput(f"unknown attention implementation {name!r}; use {' or '.join(ATTENTION_IMPLEMENTATIONS)}")


def check_sizes(lengths: Sequence[int], batch_sizes: Sequence[int], micro_batches: int) -> None:
    """The battery's sizes, each in the bounds ``check``'s options have (``pp_demo.bounds``), else one
    line that names the argument: lengths of 2 tokens or more, batch sizes of 1 row or more, 1
    micro-batch or more."""
    for name, values, least, most in (
        ("lengths", lengths, 2, MAX_LENGTH),
        ("batch_sizes", batch_sizes, 1, MAX_BATCH_SIZE),
    ):
        # a string would be read letter by letter, and a generator used up before the battery is built
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise BadInput(
                f"{name} is a list of integers of at least {least} and at most {most} (one or more), got {values!r}"
            )
        for i, value in enumerate(values):
            count_value(value, f"{name}[{i}]", least, most)
    count_value(micro_batches, "micro_batches", 1, MAX_MICRO_BATCHES)


def check_model(model: Any) -> None:
    """A sequence classifier with the score head the checker reads positions from, and a pad id
    in range."""
    name = type(model).__name__
    if model is None or not isinstance(model, torch.nn.Module) or not hasattr(model, "config"):
        raise BadInput(f"model must be a transformers *ForSequenceClassification model, got {name}")
    if not name.endswith("ForSequenceClassification"):
        raise BadInput(f"{name} is not a sequence classifier: give its *ForSequenceClassification model")
    if not isinstance(getattr(model, "score", None), torch.nn.Module):
        raise BadInput(
            f"{name} has no .score head (the checker scores every position with it, as decoder "
            "classifiers do); encoder classifiers such as BERT pool their first token and are out of scope"
        )
    _check_pad(model.config)


def _check_pad(config: Any) -> None:
    """A pad id inside the vocabulary (the core's check): the embedding would assert on another."""
    vocab = getattr(config, "vocab_size", None)
    if vocab is not None:
        check_pad_id(getattr(config, "pad_token_id", None), vocab)


def fit_lengths(model: Any, lengths: Sequence[int]) -> tuple[tuple[int, ...], str | None]:
    """The random lengths, shortened to the positions the model takes; a note when shortened."""
    config = model.config
    limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if limit is None or max(lengths) <= limit:
        return tuple(lengths), None
    if limit < named_length():
        raise BadInput(f"the model takes at most {limit} positions; the battery's named cases need {named_length()}")
    fitted = tuple(dict.fromkeys(min(length, limit) for length in lengths))
    return fitted, f"lengths {list(lengths)} shortened to {list(fitted)}: the model takes at most {limit} positions"


def as_callable(forward: Any) -> Callable[..., Any]:
    """A callable, or the "package.module:function" text of one."""
    if isinstance(forward, str):
        return load_callable(forward)
    if not callable(forward):
        raise BadInput(f"forward must be a callable (model, input_ids, attention_mask) -> logits, got {forward!r}")
    return forward  # type: ignore[no-any-return]


def load_callable(path: str) -> Callable[..., Any]:
    """``"package.module:function"`` (or ``package.module.function``) to the function."""
    module_name, _, attribute = path.partition(":") if ":" in path else path.rpartition(".")
    if not module_name or not attribute:
        raise BadInput(f"give the callable as package.module:function, got {path!r}")
    if module_name.endswith(".ipynb"):  # Python imports modules, never notebooks
        stem = Path(module_name).stem
        raise BadInput(
            f"{module_name} is a notebook, and a notebook cannot be imported: move {attribute} into a .py file "
            f"next to it ({stem}_forward.py, say) and give {stem}_forward:{attribute}"
        )
    if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
        dotted = module_name.removesuffix(".py").replace(os.sep, ".").replace("/", ".").strip(".")
        raise BadInput(
            f"{module_name} is a file path; give the module's name instead ({dotted}:{attribute}, "
            "run from the folder above it), not the path of its file"
        )
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # unless the module itself is missing, the user's code: a syntax error, a raise
        if isinstance(error, ModuleNotFoundError) and error.name is not None and module_name.startswith(error.name):
            raise BadInput(
                f"cannot import {module_name} ({error}); it must be importable from here: "
                f"run from its project folder or add that folder to PYTHONPATH"
            ) from None
        raise CallableImportFailed(f"importing {module_name} raised {describe_exception(error)}") from error
    if not hasattr(module, attribute):
        names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))[:8]
        known = f"; its callables include {', '.join(names)}" if names else ""
        raise BadInput(f"{module_name} has no {attribute!r} (a misspelt name?){known}")
    function: Callable[..., Any] | None = getattr(module, attribute)
    if not callable(function):
        raise BadInput(f"{attribute!r} in {module_name} is a {type(function).__name__}, not a callable")
    return function


def load_model(family: str | None = None, model_path: str | None = None, attn_implementation: str | None = None) -> Any:
    """A tiny pp_demo model by family, or a local checkpoint directory (never downloaded)."""
    if (family is None) == (model_path is None):
        raise BadInput("give exactly one of a family or a local model path")
    check_attention(attn_implementation)
    if family is not None:
        from pp_demo.core import build_model

        return build_model(family, attn_implementation=attn_implementation)
    from transformers import AutoConfig, AutoModelForSequenceClassification

    path = Path(str(model_path))
    if not path.is_dir():  # transformers would read it as a Hub repo id and say so
        raise BadInput(f"--model-path {model_path}: no such folder (a local checkpoint folder is expected)")
    if not (path / "config.json").is_file():
        raise BadInput(
            f"--model-path {model_path}: no config.json there, so not a saved checkpoint "
            f"(model.save_pretrained(folder) writes one)"
        )
    kwargs = {"attn_implementation": attn_implementation} if attn_implementation else {}
    try:
        _check_pad(AutoConfig.from_pretrained(path, local_files_only=True))
        return AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True, **kwargs)
    except BadInput as error:
        raise BadInput(f"--model-path {model_path}: {error}") from None
    except Exception as error:  # no weights, an unknown model type, a head of another shape, ...
        raise BadInput(f"--model-path {model_path}: cannot load it ({describe_exception(error)})") from error
