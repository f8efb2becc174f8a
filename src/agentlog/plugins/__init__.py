"""Plugins over the session log: compaction, tool-result pruning, image offload, the token meter.

Everything here only appends events — replaces that shadow nodes and projections that rewrite
visible content — so every decision stays in the log, replayable and auditable
(spec/plugins.md §2, §3, §7).
"""

from agentlog.plugins.compaction import (
    CompactionConfig,
    CompactionResult,
    ExtractiveSummarizer,
    ModelReply,
    ModelSummarizer,
    Summarizer,
    Summary,
    SummaryRequest,
    compact,
    compact_if_needed,
    compact_region,
    install_compaction_invariants,
)
from agentlog.plugins.expand import expand
from agentlog.plugins.image_offload import offload_for_failure, offload_images
from agentlog.plugins.meter import Measurement, NodePrice, TokenMeter
from agentlog.plugins.pruner import PruneConfig, PruneResult, prune_content, prune_tool_results
from agentlog.plugins.tokens import estimate_message

__all__ = [
    "CompactionConfig",
    "CompactionResult",
    "ExtractiveSummarizer",
    "Measurement",
    "ModelReply",
    "ModelSummarizer",
    "NodePrice",
    "PruneConfig",
    "PruneResult",
    "Summarizer",
    "Summary",
    "SummaryRequest",
    "TokenMeter",
    "compact",
    "compact_if_needed",
    "compact_region",
    "estimate_message",
    "expand",
    "install_compaction_invariants",
    "offload_for_failure",
    "offload_images",
    "prune_content",
    "prune_tool_results",
]
