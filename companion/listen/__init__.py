"""Offline speech input: recognisers, endpointing, WAV and microphone sources."""

# The speech engines `--engine` can name: auto picks Vosk when a Vosk model is installed or
# given, otherwise the bundled call recogniser.
ENGINES = ("auto", "bundled", "vosk")
