"""Lossless compaction: a summary replaces old history on the surface; nothing is deleted.

Implements spec/plugins.md §2 (with the token meter of §7). See ``engine`` for the entry points,
``transaction`` for what one compaction writes, ``selection`` for the span it takes, ``summary``
and ``summarizers`` for who writes the summary, ``config`` for the policy and ``invariants``
for the companion that checks compaction events at append.
"""

from agentlog.plugins.compaction.config import (
    CompactionConfig,
    CompactionPolicy,
    CompactSpec,
    ModelPolicy,
)
from agentlog.plugins.compaction.engine import (
    DEFAULT_METER,
    compact,
    compact_if_needed,
    compact_region,
    routed_target,
)
from agentlog.plugins.compaction.invariants import (
    CHECKPOINT_KIND,
    CompactionTrace,
    install_compaction_invariants,
)
from agentlog.plugins.compaction.selection import select_compactable_range
from agentlog.plugins.compaction.summarizers import (
    ExtractiveSummarizer,
    ModelReply,
    ModelSummarizer,
)
from agentlog.plugins.compaction.summary import (
    INSTRUCTION,
    PREAMBLE,
    SECTIONS,
    Summarizer,
    Summary,
    SummaryRequest,
    frame_summary,
    summary_text_blocks,
)
from agentlog.plugins.compaction.transaction import (
    CompactionResult,
    active_compaction,
    run_compaction,
)

__all__ = [
    "CHECKPOINT_KIND",
    "DEFAULT_METER",
    "INSTRUCTION",
    "PREAMBLE",
    "SECTIONS",
    "CompactSpec",
    "CompactionConfig",
    "CompactionPolicy",
    "CompactionResult",
    "CompactionTrace",
    "ExtractiveSummarizer",
    "ModelPolicy",
    "ModelReply",
    "ModelSummarizer",
    "Summarizer",
    "Summary",
    "SummaryRequest",
    "active_compaction",
    "compact",
    "compact_if_needed",
    "compact_region",
    "frame_summary",
    "install_compaction_invariants",
    "routed_target",
    "run_compaction",
    "select_compactable_range",
    "summary_text_blocks",
]
