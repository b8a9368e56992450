"""``python -m pp_demo real-size`` on the CPU: small shapes by default, the real size refused.

The issue's measurement on an H200: the fix matches model.forward on every row of every family,
the count rule only on the unpadded row. The same holds at any size, so the small shapes must
show it; which rows are unpadded is read from the batch's attention mask, not from the command."""

import re

import pytest
import torch

from pp_demo.cli import main
from pp_demo.verify.real_size import SIZES, SMALL_SHAPES, build_shaped, left_padded_batch

FAMILIES = ["llama", "qwen2", "opt"]


def rows_matched(out: str, family: str, rule: str) -> tuple[list[int], int]:
    found = re.search(rf"^  {family} {rule}: (\d+)/(\d+) rows match model.forward (\[[\d, ]*\])", out, re.M)
    assert found, (family, rule, out)
    return eval(found[3]), int(found[2])  # a list of ints, as printed


@pytest.fixture(scope="module")
def small_run():
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["real-size", "--device", "cpu"])
    return code, out.getvalue()


def test_on_the_cpu_it_shrinks_in_one_line_first(small_run):
    code, out = small_run
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("on the CPU") and "small shapes" in first


def test_progress_comes_before_each_family(small_run):
    _, out = small_run
    starts = [line.split(":")[0] for line in out.splitlines() if line.endswith("...")]
    assert starts == FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_the_fix_matches_every_row_and_the_count_rule_only_the_unpadded(small_run, family):
    _, out = small_run
    rows, seq, _ = SIZES["small"]
    _, mask = left_padded_batch(rows, seq, SMALL_SHAPES[family][1]["vocab_size"], 0, "cpu")
    unpadded = [i for i in range(rows) if bool(mask[i].all())]
    assert unpadded and len(unpadded) < rows  # the batch has both kinds
    assert rows_matched(out, family, "rightmost_non_pad") == (list(range(rows)), rows)
    assert rows_matched(out, family, "count") == (unpadded, rows)


def test_the_real_batch_is_left_padded_to_lengths_from_102_to_1024():
    rows, seq, _ = SIZES["real"]
    ids, mask = left_padded_batch(rows, seq, 128256, 0, "cpu")
    assert (rows, seq) == (8, 1024)
    lengths = mask.sum(-1).tolist()
    assert min(lengths) == 102 and max(lengths) == 1024 and lengths == sorted(lengths)
    for row, n in zip(ids, lengths, strict=True):
        assert (row[: seq - n] == 0).all() and (row[seq - n :] != 0).all()  # pads first, no real id is the pad


def test_the_real_size_on_the_cpu_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["real-size", "--size", "real", "--device", "cpu"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--size real on the CPU" in err and "--allow-cpu" in err


def test_a_local_checkpoint_runs_in_place_of_the_shapes(tmp_path, capsys):
    name, shape = SMALL_SHAPES["qwen2"]
    build_shaped("qwen2", shape, "cpu", torch.float32).save_pretrained(tmp_path / "ckpt")
    assert main(["real-size", "--device", "cpu", "--dtype", "fp32", "--checkpoint", str(tmp_path / "ckpt")]) == 0
    out = capsys.readouterr().out
    assert "qwen2: the checkpoint in ckpt" in out and str(tmp_path) not in out
    assert rows_matched(out, "qwen2", "rightmost_non_pad") == (list(range(8)), 8)
    assert rows_matched(out, "qwen2", "count") == ([7], 8)


def test_a_folder_without_a_checkpoint_is_refused_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["real-size", "--device", "cpu", "--checkpoint", str(tmp_path)])
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "not a folder holding a config.json" in err
