"""Small helpers shared by test files in more than one folder (imported as ``helpers``, since
``tests/`` is on the path through its conftest, as ``review_table`` is)."""

import pytest

from pp_demo.cli import main


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
