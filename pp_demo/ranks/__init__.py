"""A model split into stages that reuse its modules, and the one way to run them: ``run(jobs, on=...)``.

Read in this order: families -> stages -> schedules -> jobs -> in_process -> on_rank -> launch -> runner
(docs/architecture.md says what each holds); validate checks what a job and a run are given, and
torchrun_env what being one of torchrun's ranks asks for.
"""
