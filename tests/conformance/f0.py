"""Format-0 recordings compared after migration: the README's format-4 shape mapping.

``conformance/README.md``: the expected derived messages of format-0 material are the
reference's messages mapped to format-4 shapes — a tool result becomes a role-``tool`` message
with the same id and source, plugin sources are renamed as v3→v4 prescribes, and a system
prompt the log kept in request headers becomes a system message (compared apart). This mapping
is written here from the README and spec/persistence.md §5.4, independently of
``agentlog.formats``, so the chain is checked against it rather than against itself.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import zstandard

from tests.conformance.vectors import DATA

SOURCE_KINDS = {
    "compact": "compact-checkpoint",
    "tools-code-mode": "ptc-mode",
    "tools-ptc": "ptc-mode",
    "dsh-compaction-basic": "compact-basic",
}
BLOCK_TYPES = {"text", "reasoning", "image", "file", "tool-call"}
_SYNTHETIC_ID = re.compile(r"^(interrupted-[a-z-]+-.*)-\d+$")


@cache
def load_fixtures() -> tuple[dict[str, Any], ...]:
    """The vendored real session logs (``scripts/vendor_conformance.py``)."""
    raw = zstandard.ZstdDecompressor().decompress((DATA / "f0-fixtures.jsonl.zst").read_bytes())
    return tuple(json.loads(line) for line in raw.splitlines())


def _blocks(blocks: Any) -> Any:
    if not isinstance(blocks, list):
        return blocks
    return [
        {**b, "type": f"plugin:{b['type']}"}
        if isinstance(b, dict) and b.get("type") not in BLOCK_TYPES
        else b
        for b in blocks
    ]


def to_format_4(message: dict[str, Any]) -> dict[str, Any]:
    """A format-0 derived message in its format-4 shape."""
    message = dict(message)
    source = message.get("source")
    if isinstance(source, dict) and source.get("kind") == "plugin":
        name = source["plugin"]
        if name == "@deepseek-ai/dsh-system-prompt":
            kind = "system-prompt" if message.get("role") == "system" else "runtime-context"
        else:
            kind = SOURCE_KINDS.get(name, f"plugin:{name}")
        rest = {k: v for k, v in source.items() if k not in ("kind", "plugin")}
        message["source"] = {"kind": kind, **rest}
    content = message.get("content")
    if (
        message.get("role") == "user"
        and isinstance(content, list)
        and len(content) == 1
        and content[0].get("type") == "tool-result"
    ):
        block = content[0]
        lifted = {
            "id": message["id"],
            "role": "tool",
            "source": message["source"],
            "toolCallId": block["toolCallId"],
            "content": _blocks(block["content"]),
        }
        if "isError" in block:
            lifted["isError"] = block["isError"]
        return lifted
    message["content"] = _blocks(content)
    return message


def without_system_prompts(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Format 4 keeps the system prompt in the history; format 0 did not."""
    return [message for message in messages if message.get("role") != "system"]


def without_synthetic_seqs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Repair closers' ids end in their own seq, which the migration renumbers (deviation M1)."""
    return [
        {**m, "id": match[1]} if (match := _SYNTHETIC_ID.match(str(m.get("id")))) else m
        for m in messages
    ]
