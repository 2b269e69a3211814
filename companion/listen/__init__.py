"""Offline speech input: recognisers, endpointing, WAV and microphone sources."""
