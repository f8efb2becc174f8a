"""``jsonl:///dir`` and ``jsonl+zstd:///dir``: dsh-compatible transcript files.

The package owns everything of the JSONL store: the directory layout (``layout``), finding
transcripts (``find``), the writer lease (``lease``), the line codec (``codec``), checksummed
Zstandard frames (``frames``), reading (``read``) with the torn-tail rule (``torn``), the repair
cut (``cut``), and ``JsonlBackend`` (``backend``), which composes them.
"""

from __future__ import annotations

from agentlog.stores.jsonl.backend import JsonlBackend

__all__ = ["JsonlBackend"]
