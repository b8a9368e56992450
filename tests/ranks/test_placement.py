"""Where ranks compute, decided from each node's own view (issue: multi-node runs lost their
GPUs): NCCL on ``cuda:LOCAL_RANK`` when the node has a GPU for each of its ranks, else gloo
on the CPU with one line saying why. ``torch.cuda`` is monkeypatched: no GPU is needed."""

import itertools

import pytest
import torch
import torch.distributed as dist

from pp_demo.ranks.launch import ranks_placement
from pp_demo.ranks.on_rank import backend_and_device

CPU = torch.device("cpu")


@pytest.fixture
def gpus(monkeypatch):
    """``gpus(n)``: this machine now has ``n`` GPUs and a torch built with NCCL."""
    for name in ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)

    def set_count(n, nccl=True):
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)
        monkeypatch.setattr(dist, "is_nccl_available", lambda: nccl)

    return set_count


def _node_env(local_rank, local_size):
    return {"LOCAL_RANK": str(local_rank), "LOCAL_WORLD_SIZE": str(local_size)}


# (GPUs on each node, world size, ranks per node or None for LOCAL_* unset) -> NCCL?
# the rule: NCCL exactly when a node has at least as many GPUs as ranks
CASES = [
    (0, 2, None, False),
    (0, 8, 4, False),
    (1, 2, None, False),  # two ranks, one GPU: NCCL would put both on it
    (1, 2, 1, True),  # the README's --nnodes 2 --nproc-per-node 1
    (1, 3, None, False),
    (2, 2, None, True),
    (2, 3, None, False),
    (2, 8, 2, True),  # four nodes of 2
    (2, 8, 4, False),
    (8, 2, None, True),
    (8, 3, 3, True),
    (8, 8, None, True),
    (8, 8, 8, True),
    (4, 8, 4, True),  # two nodes of 4 GPUs: the global world size 8 must not matter
]


@pytest.mark.parametrize("n_gpus, world_size, per_node, nccl", CASES)
def test_nccl_on_cuda_local_rank_exactly_when_the_node_has_a_gpu_per_rank(gpus, n_gpus, world_size, per_node, nccl):
    gpus(n_gpus)
    devices = []
    for rank in range(world_size):
        env = {} if per_node is None else _node_env(rank % per_node, per_node)
        backend, device, note = backend_and_device(rank, world_size, env)
        if nccl:
            local_rank = rank % (per_node or world_size)
            assert (backend, device, note) == ("nccl", torch.device("cuda", local_rank), None)
        else:
            assert (backend, device) == ("gloo", CPU)
        devices.append((rank // (per_node or world_size), device))
    if nccl:  # ranks never share a GPU: one (node, device) pair per rank
        assert len(set(devices)) == world_size


@pytest.mark.parametrize(
    "n_gpus, world_size, local", list(itertools.product([0, 1, 2, 8], [2, 3, 8], [False, True])), ids=str
)
def test_every_case_is_one_backend_for_all_ranks_and_a_note_exactly_when_gpus_go_unused(
    gpus, n_gpus, world_size, local
):
    gpus(n_gpus)
    placed = [backend_and_device(r, world_size, _node_env(r, world_size) if local else {}) for r in range(world_size)]
    assert len({backend for backend, _, _ in placed}) == 1
    for backend, device, note in placed:
        assert (backend == "nccl") == (n_gpus >= world_size)
        assert (note is not None) == (backend == "gloo" and n_gpus > 0)
        if note is not None:
            assert "\n" not in note and note.startswith("the ranks use gloo on the CPU")
        if backend == "nccl":
            assert device.type == "cuda" and device.index < n_gpus


def test_one_gpu_and_two_ranks_says_in_one_line_that_ranks_use_the_cpu_and_in_process_the_gpu(gpus):
    gpus(1)
    backend, device, note = backend_and_device(0, 2, {})
    assert (backend, device) == ("gloo", CPU)
    assert note == (
        "the ranks use gloo on the CPU: 1 GPU for 2 ranks on this node, and NCCL needs a GPU of "
        "its own for each rank (in-process runs use the GPU)"
    )


def test_gpus_without_nccl_in_this_torch_fall_back_to_gloo_and_say_so(gpus):
    gpus(2, nccl=False)
    assert backend_and_device(1, 2, {}) == (
        "gloo",
        CPU,
        "the ranks use gloo on the CPU: this torch has no NCCL for its 2 GPUs",
    )


def test_local_rank_and_local_world_size_are_read_from_the_environment_by_default(gpus, monkeypatch):
    gpus(4)
    monkeypatch.setenv("LOCAL_RANK", "3")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert backend_and_device(7, 8) == ("nccl", torch.device("cuda", 3), None)  # rank 7 of 2 nodes x 4
    monkeypatch.delenv("LOCAL_RANK")
    monkeypatch.delenv("LOCAL_WORLD_SIZE")
    assert backend_and_device(7, 8)[:2] == ("gloo", CPU)  # unset: one node of 8 ranks


def test_spawned_ranks_count_their_node_only_and_torchruns_read_local_world_size(gpus, monkeypatch):
    gpus(1)
    # an environment left by an outer launcher: spawned ranks all run on this node anyway
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "1")
    assert ranks_placement(2)[:2] == ("gloo", CPU)
    # a torchrun rank: every variable torchrun sets (``pp_demo.ranks.torchrun_env.is_torchrun_rank``)
    for name, value in {"TORCHELASTIC_RUN_ID": "x", "RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "localhost"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MASTER_PORT", "1")
    assert ranks_placement(2) == ("nccl", torch.device("cuda", 0), None)  # one rank per node


def test_reproduce_distributed_prints_the_note_once_when_gpus_go_unused(gpus, monkeypatch, capsys):
    import pp_demo.ranks.runner as runner
    import pp_demo.verify.compare as compare
    from pp_demo.cli import main

    gpus(1)
    in_process = runner.run
    # the ranks themselves are not this test's subject: the jobs run in this process
    monkeypatch.setattr(runner, "run", lambda jobs, on: in_process(jobs, on="process"))
    monkeypatch.setattr(compare, "default_device", lambda: "cpu")
    assert main(["reproduce", "--distributed", "--family", "llama"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if "gloo" in line] == [
        "the ranks use gloo on the CPU: 1 GPU for 2 ranks on this node, and NCCL needs a GPU of "
        "its own for each rank (in-process runs use the GPU)"
    ]
    gpus(0)
    assert main(["reproduce", "--distributed", "--family", "llama"]) == 0
    assert "gloo" not in capsys.readouterr().out  # a machine without GPUs: nothing to explain
