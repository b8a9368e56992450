"""Job and run refuse bad input in one line (``BadInput``) before anything is built or started.

Each case is an input that once failed far from its cause: 1-D ids as an
IndexError in modeling_llama, float ids in the embedding, ids past the vocabulary as ``index
out of range`` (on ranks, ``rank 0 failed``), ids as a list as an AttributeError, zero rows as
``cannot reshape``, labels past the class count as an IndexError, ``timeout_s=-5`` as "did not
finish within -5 s", a fault past the micro-batches as logits that came back.
"""

import subprocess
import sys
import textwrap

import pytest
import torch
from review_table import SIX_ROWS

from pp_demo.core import as_batch, build_model
from pp_demo.errors import BadInput
from pp_demo.ranks.jobs import Batch, Fault, Job
from pp_demo.ranks.runner import run

IDS, MASK = as_batch(SIX_ROWS)
LABELS = torch.tensor([0, 1, 0, 1, 0, 1])


@pytest.fixture(scope="module")
def model():
    return build_model("llama")


def _refusal(call, *fragments):
    """``call()`` raises BadInput with one line holding every fragment."""
    with pytest.raises(BadInput) as refused:
        call()
    message = str(refused.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_a_single_job_instead_of_a_list(model):
    _refusal(lambda: run(Job.infer(model, IDS, MASK)), "run takes a list of jobs", "run([job])")


@pytest.mark.parametrize(
    "ids, mask, expected",
    [
        (IDS[0], MASK[0], ["input_ids must be 2-D", "shape (6,)", "ids[None]"]),
        (IDS.float(), MASK, ["input_ids must hold integers", "torch.float32"]),
        (IDS.tolist(), MASK, ["input_ids must be a torch.Tensor, got list"]),
        (IDS[:0], MASK[:0], ["input_ids has no token", "shape (0, 6)"]),
        (IDS[:, :0], MASK[:, :0], ["input_ids has no token", "shape (6, 0)"]),
        (IDS + 10**6, MASK, ["input_ids must lie in 0..", "(the vocabulary)"]),
        (-IDS - 1, MASK, ["input_ids must lie in 0.."]),
        (IDS, MASK[:, 1:], ["attention_mask of the shape of its input_ids (6, 6), got (6, 5)"]),
        (IDS, MASK * 2, ["attention_mask holds only 0 (padding) and 1"]),
        (IDS, None, ["attention_mask", "never None"]),
    ],
    ids=[
        "1-D",
        "float",
        "list",
        "no rows",
        "no columns",
        "past vocab",
        "negative",
        "mask shape",
        "mask 0/2",
        "no mask",
    ],
)
@pytest.mark.parametrize("on", ["process", "ranks"])
def test_ids_and_mask_are_checked_before_any_work(model, ids, mask, expected, on):
    # on="ranks" is refused before a process starts: the check costs no rank start
    _refusal(lambda: run([Job.infer(model, ids, mask)], on=on), *expected)


def test_the_vocabulary_bound_is_the_models(model):
    vocab = model.config.vocab_size
    ids = IDS.clone()
    ids[0, -1] = vocab
    _refusal(lambda: run([Job.infer(model, ids, MASK)]), f"0..{vocab - 1}", f"to {vocab}")
    ids[0, -1] = vocab - 1  # the last id of the vocabulary is fine
    assert run([Job.infer(model, ids, MASK)])[0].logits.shape == (6, model.config.num_labels)


@pytest.mark.parametrize(
    "labels, expected",
    [
        (torch.tensor([0, 1, 0, 1, 0, 9]), ["labels must lie in 0..", "num_labels"]),
        (torch.tensor([0, 1, 0, 1, 0, -1]), ["labels must lie in 0.."]),
        (LABELS.float(), ["labels must hold integers", "torch.float32"]),
        (LABELS[:5], ["one label per row: 6 rows, 5 labels"]),
    ],
    ids=["past num_labels", "negative", "float", "too few"],
)
def test_labels_are_checked(model, labels, expected):
    _refusal(lambda: run([Job.step(model, IDS, MASK, labels)]), *expected)
    _refusal(lambda: run([Job.train(model, [Batch(IDS, MASK, labels)])]), *expected)


def test_labels_at_the_last_class_are_fine(model):
    labels = torch.full((6,), model.config.num_labels - 1)
    assert run([Job.step(model, IDS, MASK, labels)])[0].loss > 0


@pytest.mark.parametrize("timeout_s", [0, -5, float("nan"), float("inf"), "10", True])
def test_the_timeout_must_be_a_number_of_seconds_above_zero(model, timeout_s):
    _refusal(lambda: run([Job.infer(model, IDS, MASK)], on="ranks", timeout_s=timeout_s), "timeout_s", "> 0")


@pytest.mark.parametrize(
    "fault, n_micro, expected",
    [
        (Fault(rank=1, how="hang"), 1, "runs 1 micro-batch forward(s), at 0..0"),  # the default at=1
        (Fault(rank=1, at=99), 2, "runs 2 micro-batch forward(s), at 0..1"),
        (Fault(rank=0, at=-1), 2, "would never fire"),
    ],
    ids=["default at, one micro-batch", "at 99", "at -1"],
)
def test_a_fault_that_would_never_fire_is_refused(model, fault, n_micro, expected):
    job = Job.infer(model, IDS, MASK, n_micro=n_micro, fault=fault)
    _refusal(lambda: run([job], on="ranks"), "would never fire", expected)


def test_a_fault_counts_the_forwards_of_every_batch_of_a_training_job(model):
    batches = [Batch(IDS, MASK, LABELS)] * 3
    job = Job.train(model, batches, n_micro=2, fault=Fault(rank=0, at=6))
    _refusal(lambda: run([job], on="ranks"), "runs 6 micro-batch forward(s), at 0..5")


def test_a_fault_is_refused_in_one_process(model):
    job = Job.infer(model, IDS, MASK, n_micro=2, fault=Fault(rank=1))
    _refusal(lambda: run([job], on="process"), "on='process' has none", "on='ranks'")


def test_a_place_that_is_neither_process_nor_ranks(model):
    _refusal(lambda: run([Job.infer(model, IDS, MASK)], on="gpu"), "'process' or 'ranks'", "'gpu'")


def test_something_that_is_not_a_job(model):
    _refusal(lambda: run([(IDS, MASK)]), "run takes Job objects", "tuple")


@pytest.mark.distributed
def test_a_script_that_starts_ranks_without_the_main_guard_gets_one_line(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            """
            from pp_demo.ranks.runner import run
            from pp_demo.core import build_model
            from pp_demo.ranks.jobs import Job
            import torch

            ids = torch.tensor([[0, 0, 5, 6], [5, 6, 7, 8]])
            print(run([Job.infer(build_model("llama"), ids, (ids != 0).long())], on="ranks"))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("pp_demo.errors.BadInput: line 8 of unguarded.py starts ranks outside")
    assert 'if __name__ == "__main__":' in last
    assert "bootstrapping phase" not in done.stderr and str(tmp_path) not in last


@pytest.mark.distributed
def test_the_same_script_under_the_guard_runs(tmp_path):
    script = tmp_path / "guarded.py"
    script.write_text(
        textwrap.dedent(
            """
            from pp_demo.ranks.runner import run
            from pp_demo.core import build_model
            from pp_demo.ranks.jobs import Job
            import torch

            if __name__ == "__main__":
                ids = torch.tensor([[0, 0, 5, 6], [5, 6, 7, 8]])
                job = Job.infer(build_model("llama"), ids, (ids != 0).long())
                print(tuple(run([job], on="ranks")[0].logits.shape))
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(2, 3)"


# ---- models built from known fields only; meta tensors; strings where lists are expected


@pytest.mark.parametrize(
    "family, overrides, expected",
    [
        (
            "llama",
            {"num_hidden_layer": 2},
            "LlamaConfig has no field 'num_hidden_layer' (did you mean num_hidden_layers?)",
        ),
        ("llama", {"num_labels": 0}, "num_labels is an integer of at least 1, got 0"),
        (
            "llama",
            {"num_hidden_layers": -1},
            "num_hidden_layers of the llama config is an integer of at least 1, got -1",
        ),
        ("gpt2", {"n_layer": 0}, "num_hidden_layers of the gpt2 config is an integer of at least 1, got 0"),
        ("llama", {"vocab_size": 1}, "vocab_size of the llama config is an integer of at least 2, got 1"),
        ("llama", {"num_attention_heads": 3}, "hidden_size 16 does not split into 3 attention heads"),
        ("llama", {"pad_token_id": 99}, "pad_token_id 99 is outside the vocabulary (ids 0..31)"),
        ("llama", {"seed": -1}, "seed is an integer from 0 to 2**64 - 1, got -1"),
    ],
)
def test_build_model_takes_known_fields_and_sane_values_only(family, overrides, expected):
    from pp_demo.core import build_model

    with pytest.raises(BadInput) as refused:
        build_model(family, **overrides)
    assert expected in str(refused.value) and "\n" not in str(refused.value)


def test_build_model_still_takes_the_fields_of_each_family_by_alias():
    from pp_demo.core import build_model

    assert build_model("gpt2", n_positions=8).config.n_positions == 8
    assert build_model("gpt2", num_hidden_layers=2).config.n_layer == 2  # the alias of n_layer
    assert build_model("llama", pad_token_id=None).config.pad_token_id is None


@pytest.mark.parametrize("where", ["ids", "mask", "model"])
def test_meta_tensors_are_refused_in_one_line_by_run(where):
    from pp_demo.core import build_model
    from pp_demo.ranks.jobs import Job
    from pp_demo.ranks.runner import run

    model = build_model("llama")
    ids, mask = torch.tensor([[0, 5, 6, 7]]), torch.tensor([[0, 1, 1, 1]])
    if where == "ids":
        ids = ids.to("meta")
    elif where == "mask":
        mask = mask.to("meta")
    else:
        model = model.to("meta")
    with pytest.raises(BadInput, match="on the meta device"):
        run([Job.infer(model, ids, mask)])


def test_a_one_layer_model_without_a_split_says_it_cannot_be_split():
    from pp_demo.core import build_model, pipeline_logits

    ids, mask = torch.tensor([[0, 5, 6, 7]]), torch.tensor([[0, 1, 1, 1]])
    with pytest.raises(BadInput, match=r"a model with 1 layer\(s\) cannot be split into stages"):
        pipeline_logits(build_model("llama", num_hidden_layers=1), ids, mask)


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"rows": ()}, "rows names the padding cases of the batch, at least one"),
        ({"rows": "left"}, "rows takes a list of names, got the string 'left'"),
        ({"seed": "x"}, "seed is an integer from 0 to 2**64 - 1, got 'x'"),
        ({"dtype": "fp64"}, "unknown precision 'fp64'; use one of fp32, bf16, fp16"),
    ],
)
def test_reproduce_names_what_is_wrong(options, expected):
    from pp_demo.verify.compare import reproduce

    with pytest.raises(BadInput) as refused:
        reproduce("llama", **options)
    assert expected in str(refused.value)


def test_reproduce_takes_a_precision_by_its_name_as_check_forward_does():
    from pp_demo.verify.compare import reproduce

    assert reproduce("llama", "count", dtype="bf16").matches == reproduce("llama", "count").matches


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"rules": "count"}, "rules takes a list of rule names, got the string 'count': give ['count']"),
        ({"cases": "left"}, "cases takes a list of case names, got the string 'left': give ['left']"),
    ],
)
def test_padding_table_refuses_a_string_where_a_list_is_expected(options, expected):
    from pp_demo.pooling.padding_table import padding_table

    with pytest.raises(BadInput) as refused:
        padding_table(**options)
    assert str(refused.value) == expected


@pytest.mark.parametrize("mode", ["infer", "step"])
@pytest.mark.parametrize("option", [{"lr": 0.1}, {"keep_params_every": 2}], ids=["lr", "keep_params_every"])
def test_a_job_that_does_not_train_carries_no_training_option(mode, option):
    model = build_model("llama")
    ids, mask = as_batch(["left", "right"])
    with pytest.raises(BadInput, match="training options"):  # refused as the job is built: it has no field for it
        if mode == "infer":
            Job.infer(model, ids, mask, **option)
        else:
            Job.step(model, ids, mask, torch.tensor([0, 1]), **option)


@pytest.mark.parametrize("lr", [0, -1.0, "0.1", True])
def test_a_training_job_needs_a_learning_rate_above_zero(lr):
    model = build_model("llama")
    ids, mask = as_batch(["left", "right"])
    with pytest.raises(BadInput, match="learning rate"):
        run([Job.train(model, [(ids, mask, torch.tensor([0, 1]))], lr=lr)])
