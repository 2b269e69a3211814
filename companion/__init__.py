"""companion: an offline, hands-free referee for Perudo played with real cups and dice."""

__version__ = "0.1.0"
