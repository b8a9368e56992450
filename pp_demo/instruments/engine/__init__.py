"""ColossalAI 0.5.0's own pipeline engine (``HybridParallelPlugin``) on two ranks: the run, its
ranks' worker, the multi-stage claim judged on what it recorded, and ``colossalai-engine``."""
