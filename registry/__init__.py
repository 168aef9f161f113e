"""Batch runs over the Penrose registry, the benchmark harness, and our own example diagrams."""
