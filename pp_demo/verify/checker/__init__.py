"""The checker: any framework's pooled forward judged against ``model.forward`` on the padding
battery (``judge``), its batches and inputs, the guard process it runs the callable in, torchrun's
ranks, the report, and ``python -m pp_demo check`` (``cli``)."""
