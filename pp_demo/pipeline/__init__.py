"""A model split into stages that reuse its modules, and the one way to run them: ``run(jobs, on=...)``.

families (a model family as a row) -> stages (the split) -> schedules (the registry by name,
which stages a rank holds, GPipe and 1F1B order) -> jobs (what to run) -> in_process (every
stage in this process) -> on_rank (where a rank computes and what it runs on
torch.distributed.pipelining) -> launch (starting the ranks) -> runner. validate checks what a job and a run are given;
torchrun_env is what being one of torchrun's ranks asks for.
"""
