"""Pooling rules, padding cases and the two references, the padding table, packed batches.

Imports only ``errors`` of pp_demo: every other folder builds on this one.
"""
