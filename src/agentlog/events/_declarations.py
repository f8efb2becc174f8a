"""The built-in declarations behind ``agentlog.events.catalog`` (spec/core.md §2.4, §8.2).

One row per type of the format-4 known list: name, badge, owner, meaning. Types whose producing
plugin agentlog does not ship are declared too, so that every dsh log opens; their ``data`` is
kept as opaque JSON.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["CORE_DECLARATIONS"]

_Badge = Literal["surface", "log-only", "projection"]

CORE_DECLARATIONS: Final[tuple[tuple[str, _Badge, str, str], ...]] = (
    # --- the session core: turns, steps, messages, requests --------------------------------
    ("turn/start", "log-only", "core", "Opens turn `turn` (numbered from 1). Data `{turn}`."),
    (
        "turn/end",
        "log-only",
        "core",
        "Closes the open turn and says why. Data `{turn, reason: {kind: completed | aborted | "
        "blocked | error | max-tokens | interrupted | forked, ...}}`.",
    ),
    (
        "step/start",
        "log-only",
        "core",
        "Opens step `step` of the open turn: one model call plus the tool calls it asks for. "
        "Data `{turn, step}`.",
    ),
    (
        "step/end",
        "log-only",
        "core",
        "Closes the open step; its unanswered tool calls are never repaired later. "
        "Data `{turn, step}`.",
    ),
    (
        "system/message",
        "surface",
        "core",
        "The system prompt as surface node 0 (or a later in-history prompt); empty content means "
        "no prompt. Data `{turn, step, message: {role: system, source: {kind: system-prompt}}}`.",
    ),
    (
        "developer/message",
        "surface",
        "core",
        "Tool additions and removals announced to the model. Data `{turn, step, message: {role: "
        "developer, content: [tool-addition | tool-removal]}, headerSeq?}`; `headerSeq` names the "
        "request/header defining the added tools.",
    ),
    (
        "user/message",
        "surface",
        "core",
        "A user-role message (a prompt, injected context or a compaction summary, told apart by "
        "`source.kind`). The data is the message itself: `{id, role: user, content, source}`.",
    ),
    (
        "assistant/message",
        "surface",
        "core",
        "A settled model reply with its raw stream. Data `{turn, step, message: {role: assistant, "
        "source: {kind: model, provider, model}}, stream, usage?, interrupted?}`.",
    ),
    (
        "assistant/attempt",
        "log-only",
        "core",
        "A settled model attempt that committed no message (failed, retried, cancelled). "
        "Data `{turn, step, stream}`.",
    ),
    (
        "tool/call",
        "log-only",
        "core",
        "A tool call as dispatched, logged before the tool runs. "
        "Data `{turn, step, callId, name, arguments}` (`arguments` is raw JSON text).",
    ),
    (
        "tool/result",
        "surface",
        "core",
        "The result of one tool call as a role-`tool` message. Data `{turn, step, message: {role: "
        "tool, toolCallId, isError?, content}, error?: {name, code, reason?}, meta?}`.",
    ),
    (
        "request/header",
        "log-only",
        "core",
        "The model request configuration in force from here on. Data `{header: {config, "
        "adapterDefaults?, tools?}, reason: initial | resume | change | series, startsSeries?}`.",
    ),
    (
        "request/context",
        "log-only",
        "core",
        "The provider, model and context window of the next requests. Data `{provider, model, "
        "contextWindow?, systemPromptUpdate?}`.",
    ),
    (
        "session/end-seed",
        "log-only",
        "core",
        "Marks the end of a constructor seed (resume, fork, replay); `{inherited: true}` marks a "
        "fork child's inherited cut. Data `{inherited?}`.",
    ),
    (
        "todo/write",
        "log-only",
        "todo",
        "The whole to-do list after a write (last write wins). "
        "Data `{todos: [{content, status: pending | in_progress | completed}]}`.",
    ),
    # --- compaction and projections -------------------------------------------------------
    (
        "compaction/start",
        "log-only",
        "compaction",
        "Opens a compaction transaction and takes its lock. Data `{compactionId, sourceCommandId?, "
        "turn}` (`turn` is null for a manual compaction between turns).",
    ),
    (
        "compaction/summary",
        "log-only",
        "compaction",
        "The summary a compaction produced and what it shadows; the replacing user/message follows "
        "at once. Data `{compactionId, summary, shadowedRange, shadowedSeqs, shadowedTokenCount, "
        "provider, model, ...}`.",
    ),
    (
        "compaction/end",
        "log-only",
        "compaction",
        "Closes a compaction transaction and releases its lock; `error` marks a failed attempt. "
        "Data `{compactionId, sourceCommandId?, turn, error?}`.",
    ),
    (
        "compaction/prune",
        "log-only",
        "compaction",
        "The shadow price of one content-only tool-result replacement, appended right before it. "
        "Data `{shadowedRange, shadowedSeqs, shadowedTokenCount}`.",
    ),
    (
        "image/offload",
        "projection",
        "image-offload",
        "Permanently replaces selected images of visible messages with placeholders. "
        "Data `{targets: [{seq, imageIndexes}]}`.",
    ),
    # --- the agent loop and its plugins (opaque data) -------------------------------------
    (
        "agent/inbox/spliced",
        "log-only",
        "agent",
        "An edit of the agent's durable input inbox (insert, claim or discard of queued input).",
    ),
    (
        "agent-preset/selected",
        "log-only",
        "agent-preset",
        "The agent preset chosen for the session.",
    ),
    ("approval/asked", "log-only", "approval", "A tool call waiting for the user's approval."),
    ("approval/decided", "log-only", "approval", "The user's decision on an approval request."),
    ("approval/policy", "log-only", "approval", "The approval policy in force from here on."),
    ("command/run", "log-only", "commands", "A slash command the user ran."),
    ("command/done", "log-only", "commands", "The outcome of a slash command."),
    (
        "deliverables/presented",
        "log-only",
        "deliverables",
        "Files or artifacts presented to the user as the turn's deliverables.",
    ),
    ("feedback/record", "log-only", "feedback", "User feedback recorded on the session."),
    ("feedback/message-put", "log-only", "feedback", "User feedback attached to a message."),
    (
        "feedback/message-delete",
        "log-only",
        "feedback",
        "Removal of feedback attached to a message.",
    ),
    ("goal/change", "log-only", "goal", "A change of the session's standing goal."),
    ("hook/invoked", "log-only", "hooks", "A user hook started."),
    ("hook/result", "log-only", "hooks", "The result of a user hook."),
    (
        "llm/retry",
        "log-only",
        "llm-retry",
        "A failed model call that will be retried after a wait.",
    ),
    ("llm/retry-started", "log-only", "llm-retry", "A scheduled model retry began."),
    (
        "model/selection",
        "log-only",
        "model-selection",
        "The model chosen for the following requests.",
    ),
    ("permission/preset", "log-only", "permissions", "The permission preset in force."),
    ("plan/mode", "log-only", "plan-mode", "Plan mode switched on or off."),
    ("sandbox/mode", "log-only", "sandbox", "The sandbox mode in force."),
    ("schedule/change", "log-only", "schedule", "A change of scheduled work."),
    ("session/title", "log-only", "session-title", "The session's title."),
    (
        "session/title-llm-request",
        "log-only",
        "session-title",
        "The model request that produced the session title.",
    ),
    (
        "session-log-deepseek/delivery-accepted",
        "log-only",
        "session-log-deepseek",
        "A session-log delivery accepted by the DeepSeek log service.",
    ),
    ("subagent/catalog", "log-only", "subagents", "Facts about the subagents a session started."),
    ("subagent/descriptor", "log-only", "subagents", "What a subagent session was started for."),
    (
        "subagent/model-selection-policy",
        "log-only",
        "subagents",
        "How subagents choose their models.",
    ),
    ("team/member", "log-only", "team", "A member joined or left the agent team."),
    ("team/message/queued", "log-only", "team", "A message queued for a team member."),
    ("team/message/delivered", "log-only", "team", "A queued team message was delivered."),
    ("team/task", "log-only", "team", "A task assigned within the agent team."),
    ("tool-workflow/run-start", "log-only", "tool-workflow", "A tool workflow run started."),
    ("tool-workflow/run-end", "log-only", "tool-workflow", "A tool workflow run ended."),
    (
        "tool-workflow/agent-start",
        "log-only",
        "tool-workflow",
        "An agent inside a tool workflow started.",
    ),
    (
        "tool-workflow/agent-end",
        "log-only",
        "tool-workflow",
        "An agent inside a tool workflow ended.",
    ),
    (
        "tool/ptc-dispatch-start",
        "log-only",
        "tools-ptc",
        "Programmatic tool calling began dispatching calls from model-written code.",
    ),
    (
        "tool/ptc-dispatch",
        "log-only",
        "tools-ptc",
        "One tool call dispatched from model-written code.",
    ),
    (
        "web/deepseek-search-llm-request",
        "log-only",
        "web-search",
        "The model request behind a web search.",
    ),
    ("workspace/changes", "log-only", "workspace", "Files the turn changed in the workspace."),
)
