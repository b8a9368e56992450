"""Minimal reproduction: ColossalAI 0.5.0's interleaved pipeline schedule hangs on gloo.

    python colossalai_interleaved_hang.py                     # overlap_p2p=True (the default)
    python colossalai_interleaved_hang.py --keep-handles      # the same, send handles kept alive
    python colossalai_interleaved_hang.py --overlap-p2p off   # the workaround
    python colossalai_interleaved_hang.py --training          # a training step instead of inference

Each run starts two gloo ranks on this CPU and calls ``booster.execute_pipeline`` once with
``HybridParallelPlugin(pp_size=2, pp_style="interleaved", num_model_chunks=2)``. A run whose
ranks are not both done within ``--timeout`` seconds is reported as hung and its ranks killed.
Needs torch, transformers 4.51.3 and colossalai 0.5.0; nothing else.
"""

import argparse
import socket

import torch
import torch.multiprocessing as mp


def _keep_send_handles_alive() -> None:
    """Keep every handle ``InterleavedSchedule.send_*`` returns referenced (never waited on)."""
    from colossalai.pipeline.schedule import interleaved_pp

    kept = []
    for name in ("send_forward", "send_backward"):
        real = getattr(interleaved_pp.InterleavedSchedule, name)

        def keeping(self, *args, _real=real, **kwargs):
            handles = _real(self, *args, **kwargs)
            kept.append(handles)
            return handles

        setattr(interleaved_pp.InterleavedSchedule, name, keeping)


def rank_main(rank: int, port: int, overlap_p2p: bool, keep_handles: bool, training: bool) -> None:
    torch.set_num_threads(1)
    import torch.distributed as dist

    dist.is_hccl_available = lambda: False  # torch 2.13 has none; colossalai/pipeline/p2p.py:159 calls it
    import colossalai
    from colossalai.booster import Booster
    from colossalai.booster.plugin import HybridParallelPlugin
    from transformers import LlamaConfig, LlamaForSequenceClassification

    colossalai.launch(rank, 2, "127.0.0.1", port, verbose=False)  # gloo: the accelerator is the CPU
    if keep_handles:
        _keep_send_handles_alive()
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=2,
        num_key_value_heads=1, pad_token_id=0, num_labels=3, attn_implementation="eager",
    )  # fmt: skip
    model = LlamaForSequenceClassification(config)
    plugin = HybridParallelPlugin(
        tp_size=1, pp_size=2, precision="fp32", microbatch_size=1,
        pp_style="interleaved", num_model_chunks=2, overlap_p2p=overlap_p2p,
    )  # fmt: skip
    booster = Booster(plugin=plugin)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0) if training else None
    model, optimizer, *_ = booster.boost(model, optimizer)
    batch = {
        "input_ids": torch.tensor([[0, 0, 5, 6, 7, 8], [5, 6, 7, 8, 0, 0]]),
        "attention_mask": torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]]),
        "labels": torch.tensor([0, 1]),
    }
    with torch.set_grad_enabled(training):
        booster.execute_pipeline(iter([batch]), model, lambda out, _: out.loss, optimizer, return_loss=True)
    # as a training loop would go on to its next step: a rank that is done waits for its peer
    dist.barrier()
    dist.destroy_process_group()


def one_run(args: argparse.Namespace) -> str:
    """``finished``, ``failed`` (a rank raised) or ``hung`` (not done within the timeout)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    flags = (port, args.overlap_p2p == "on", args.keep_handles, args.training)
    context = mp.start_processes(rank_main, args=flags, nprocs=2, join=False, start_method="spawn")
    for process in context.processes:
        process.join(args.timeout)
    codes = [p.exitcode for p in context.processes]
    for process in context.processes:
        if process.is_alive():
            process.kill()
            process.join()
    return "hung" if None in codes else "finished" if codes == [0, 0] else "failed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlap-p2p", choices=["on", "off"], default="on")
    parser.add_argument("--keep-handles", action="store_true")
    parser.add_argument("--training", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    hung = 0
    for run in range(1, args.runs + 1):
        outcome = one_run(args)
        hung += outcome == "hung"
        print(f"run {run}: {outcome}", flush=True)
    print(f"{hung} of {args.runs} runs hung", flush=True)


if __name__ == "__main__":
    main()
