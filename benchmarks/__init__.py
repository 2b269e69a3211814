"""Benchmarks that sit beside the package: `companion bench speech` runs benchmarks.speech.

They need the training tools (training/voices.py, training/augment.py) to make their speech,
so they live in the repository, not in the installed package.
"""
