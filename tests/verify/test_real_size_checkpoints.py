"""``real-size --checkpoint DIR`` on folders saved with ``save_pretrained`` and then broken on
purpose: each broken one gets the one line ``check --model-path`` gives it (the checker's door),
never a traceback nor a verdict on a model whose weights were not loaded; a sound one runs."""

import json
import shutil

import pytest
import transformers
from helpers import cli_error

from pp_demo.cli import main
from pp_demo.core import build_model
from pp_demo.errors import BadInput
from pp_demo.verify import real_size
from pp_demo.verify.checker.inputs import load_model

RUN = ["real-size", "--device", "cpu", "--dtype", "fp32", "--checkpoint"]


def _save(model, folder):
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def ck(tmp_path_factory):
    """Checkpoint folders by name: sound ones and broken ones."""
    root = tmp_path_factory.mktemp("ck")
    config = build_model("llama").config
    config.num_labels = 5
    _save(transformers.LlamaForSequenceClassification(config), root / "labels5")  # a fine-tuned 5-way head
    for name in ("noweights", "trunc_config", "no_model_type", "attempt", "st1000", "sthalf", "qwen_as_opt"):
        _save(build_model("qwen2"), root / name)
    (root / "noweights" / "model.safetensors").unlink()
    text = (root / "trunc_config" / "config.json").read_text(encoding="utf-8")
    (root / "trunc_config" / "config.json").write_text(text[: len(text) // 2], encoding="utf-8")
    config_json = json.loads(text)
    del config_json["model_type"]
    (root / "no_model_type" / "config.json").write_text(json.dumps(config_json), encoding="utf-8")
    (root / "attempt" / "config.json").write_text("{}", encoding="utf-8")  # "attempt" holds "mpt"
    weights = (root / "st1000" / "model.safetensors").read_bytes()
    (root / "st1000" / "model.safetensors").write_bytes(weights[:1000])
    (root / "sthalf" / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    build_model("opt").config.save_pretrained(root / "opt_config")
    shutil.copy(root / "opt_config" / "config.json", root / "qwen_as_opt" / "config.json")  # qwen2 weights
    for name, positions in (("opt16", 16), ("opt5", 5)):
        config = build_model("opt").config
        config.max_position_embeddings = positions
        _save(transformers.OPTForSequenceClassification(config), root / name)
    config = build_model("qwen2").config
    config.pad_token_id = 1000  # past the 32-id vocabulary
    config.save_pretrained(root / "pad1000")
    shutil.copy(root / "labels5" / "model.safetensors", root / "pad1000")
    _save(build_model("qwen2"), root / "good")
    return root


@pytest.mark.parametrize("name", ["noweights", "trunc_config", "st1000", "sthalf", "pad1000"])
def test_a_broken_folder_gets_the_checkers_own_line(capsys, ck, name):
    with pytest.raises(BadInput) as door:
        load_model(model_path=str(ck / name))
    line = cli_error(capsys, *RUN, str(ck / name))
    said = " ".join(str(door.value).split()).replace("--model-path", "--checkpoint", 1)
    assert line == f"python -m pp_demo: error: {said}"


@pytest.mark.parametrize("name", ["no_model_type", "attempt"])
def test_a_config_without_a_model_type_is_not_given_one_from_the_folders_name(capsys, ck, name):
    line = cli_error(capsys, *RUN, str(ck / name))
    assert "names no model_type" in line and "mpt" not in line.split(name, 1)[1]


def test_weights_of_another_family_under_a_config_are_refused_not_judged(capsys, ck):
    line = cli_error(capsys, *RUN, str(ck / "qwen_as_opt"))
    assert "none of its opt model's weights are in its files" in line and "rows" not in line


def test_a_fine_tuned_head_of_five_labels_runs_and_the_fix_matches_every_row(capsys, ck):
    assert main([*RUN, str(ck / "labels5")]) == 0
    out = capsys.readouterr().out
    assert "llama rightmost_non_pad: 8/8 rows match model.forward" in out
    assert "llama count: 1/8 rows match model.forward [7]" in out  # the unpadded row alone


def test_rows_are_shortened_to_the_positions_the_checkpoint_takes(capsys, ck):
    assert main([*RUN, str(ck / "opt16")]) == 0
    out = capsys.readouterr().out
    assert "rows shortened to 16 tokens: the checkpoint takes at most 16 positions" in out
    assert "opt rightmost_non_pad: 8/8 rows match model.forward" in out
    line = cli_error(capsys, *RUN, str(ck / "opt5"))
    assert "takes at most 5 positions" in line


def test_families_are_refused_beside_a_checkpoint(capsys, ck):
    line = cli_error(capsys, *RUN, str(ck / "good"), "--families", "opt")
    assert "--families picks the shapes to build; --checkpoint runs the checkpoint's own" in line


def test_the_real_batch_on_the_cpu_is_weighed_by_the_checkpoints_own_size(capsys, ck, monkeypatch):
    assert main([*RUN, str(ck / "good"), "--size", "real"]) == 0  # 0.01M parameters: seconds, not refused
    out = capsys.readouterr().out  # the tiny model's 64 positions bound the 1024 tokens
    assert "rows shortened to 64 tokens" in out and "qwen2 rightmost_non_pad: 8/8 rows" in out
    monkeypatch.setattr(real_size, "MAX_CPU_PARAMETERS", 1000)  # as a 1B checkpoint would be
    line = cli_error(capsys, *RUN, str(ck / "good"), "--size", "real")
    assert "through the checkpoint's 0.01M parameters" in line and "0.5-1.3B" not in line and "--allow-cpu" in line
