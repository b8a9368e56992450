"""Judging a pipeline against ``model.forward``: tolerances, the reproduction, the family
matrix, the checker for any framework's forward, the ONNX export.
"""
