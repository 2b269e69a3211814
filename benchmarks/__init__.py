"""Benchmarks that sit beside the runtime package: `companion bench speech` runs
benchmarks.speech, `companion bench vision` benchmarks.vision.

They need the training tools (training/voices.py and training/augment.py make the speech,
training/dice_photos.py splits and scores the labelled dice photos), so they live beside
companion/, not inside it.
"""
