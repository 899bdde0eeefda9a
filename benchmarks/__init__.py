"""Throughput and profiling benchmarks (run from the repository root: ``python -m benchmarks.throughput``)."""
