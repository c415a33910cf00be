"""anemon: watch, drive, record and replay sustained LLM benchmarks on an iPhone."""

__version__ = "0.1.0"
