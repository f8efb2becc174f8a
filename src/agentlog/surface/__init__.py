"""The surface: which logged events the model sees, and how (spec/core.md §5–§6).

The surface is the ordered list of seqs (nodes) whose events produce model messages. An event
either appends itself, replaces a range of nodes (shadowing them — they stay in the log), or,
as a message projection, rewrites the content of visible messages.
"""

from agentlog.surface.derive import derive_event_message, derive_node_messages
from agentlog.surface.fold import FoldResult, Replacement, fold_surface
from agentlog.surface.markers import APPEND, check_markers
from agentlog.surface.projections import (
    IMAGE_OFFLOAD,
    ImageOffloadProjection,
    MessageProjection,
    ProjectionContext,
    ProjectionError,
    image_blocks,
    projection_registry,
)
from agentlog.surface.state import Plan, SurfaceState

__all__ = [
    "APPEND",
    "IMAGE_OFFLOAD",
    "FoldResult",
    "ImageOffloadProjection",
    "MessageProjection",
    "Plan",
    "ProjectionContext",
    "ProjectionError",
    "Replacement",
    "SurfaceState",
    "check_markers",
    "derive_event_message",
    "derive_node_messages",
    "fold_surface",
    "image_blocks",
    "projection_registry",
]
