"""Small helpers shared by test files in more than one folder (imported as ``helpers``, since
``tests/`` is on the path through its conftest, as ``review_table`` is)."""

import itertools
import re
import signal

import pytest
import torch

from pp_demo.cli import main
from pp_demo.pooling.positions import pooled_positions


def cli_error(capsys, *argv):
    """Run the CLI on ``argv``; the one stderr line it exits with (status 2), after argparse's
    usage lines, with no traceback and nothing on stdout."""
    with pytest.raises(SystemExit) as stopped:
        main(list(argv))
    captured = capsys.readouterr()
    assert stopped.value.code == 2
    assert "Traceback" not in captured.err and captured.out == ""
    lines = [line for line in captured.err.splitlines() if not line.startswith(("usage:", " "))]
    assert len(lines) == 1, captured.err
    return lines[0]


def run_check(capsys, *args):
    """``python -m pp_demo check ARGS`` in this process: its exit status, stdout and stderr."""
    try:
        code = main(["check", *args])
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def one_process_step(model, ids, mask, labels):
    """``model.forward``'s loss and gradients on the whole batch: the reference of a pipelined step."""
    model.zero_grad(set_to_none=True)
    loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
    loss.backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return float(loss.detach()), grads


def interruptible():
    """A ``preexec_fn``: the child takes Ctrl-C as a terminal's foreground program does, even when the
    tests themselves run in the background (a shell without job control starts those with SIGINT
    ignored, and a child inherits that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# Row shapes, as in pp_demo.pooling.failure: "r" a non-pad token, "p" padding (the pad id, mask 0),
# "e" a real eos that carries the pad id (mask 1).
SHAPE_PAD, SHAPE_REAL = 0, 7
ROW_SHAPES = ["".join(s) for n in range(1, 7) for s in itertools.product("rpe", repeat=n)]


def landings(rule):
    """``{shape: (where rule lands, the true last real token, model.forward's position)}`` for every
    row shape of length 1 to 6; the true last is None on a row of padding only. Positions are where
    tensor indexing lands (a raw -1 reads the last position)."""
    out = {}
    for n in range(1, 7):
        shapes = [s for s in ROW_SHAPES if len(s) == n]
        ids = torch.tensor([[SHAPE_REAL if c == "r" else SHAPE_PAD for c in s] for s in shapes])
        mask = torch.tensor([[0 if c == "p" else 1 for c in s] for s in shapes])
        landed = pooled_positions(rule, input_ids=ids, pad_token_id=SHAPE_PAD, attention_mask=mask) % n
        for s, at in zip(shapes, landed.tolist(), strict=True):
            real = [i for i, c in enumerate(s) if c in "re"]
            non_pad = [i for i, c in enumerate(s) if c == "r"]
            out[s] = (at, real[-1] if real else None, non_pad[-1] if non_pad else 0)
    return out


# What names the bug: a row's verdict (`[False, True]`, a cross), the count rule's, or its words.
# A set-up step (`make setup`, the doctor) and the README's attendee section show none of them.
VERDICT = re.compile(
    r"\[(False|True)\b|row matches|[✗✓]|\bwrong\b|\bDIFFERENT\b|\bcount\b[^\n]*\b(False|True)\b"
    r"|count of non-pad|minus one|left-padded row",
    flags=re.I,
)


def verdicts(text):
    """Every piece of ``text`` that names the bug (VERDICT); empty when it names none."""
    return [match[0] for match in VERDICT.finditer(text)]
