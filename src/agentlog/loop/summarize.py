"""Compaction summaries written by the agent's own model provider.

Implements the summarizer side of spec/plugins.md §2.10 for the loop: one streamed model call
with ``purpose: "compaction"`` whose messages are the shadowed span's derived messages followed
by the compaction instruction, and whose tools are the request's (so the provider sees the
prefix it saw before, and its cache is reused). The reply's blocks are kept whole as the raw
output; the engine keeps only the text.
"""

from __future__ import annotations

from agentlog.errors import CompactionError, ProviderError
from agentlog.loop.attempt import Attempt
from agentlog.loop.model import ModelRequest, Provider
from agentlog.plugins.compaction import Summary, SummaryRequest

__all__ = ["ProviderSummarizer"]


class ProviderSummarizer:
    """Summarises with one call to the agent's provider.

    The call goes to the summarization target's model when the target is this provider, else
    to the provider's own model.

    Args:
        provider: The provider the agent talks to.
    """

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    async def __call__(self, request: SummaryRequest) -> Summary:
        """Stream the summary request and collect the reply.

        Raises:
            CompactionError: ``summary`` code — the call failed, or was cut at the token cap.
        """
        provider = self.provider
        model = request.model if request.provider == provider.name and request.model else None
        model = model or provider.model
        call = ModelRequest(
            provider=provider.name,
            model=model,
            messages=request.messages,
            tools=list(request.tools),
            max_tokens=request.max_tokens,
            session_id=request.session_id,
            purpose="compaction",
        )
        attempt = Attempt()
        try:
            async for chunk in provider.stream(call):
                attempt.add(chunk, 0)
                if attempt.finish is not None:
                    break
        except ProviderError as exc:
            raise CompactionError(f"summarization failed: {exc}", code="summary") from exc
        failure = attempt.failure
        if failure is not None:
            raise CompactionError(f"summarization failed: {failure['message']}", code="summary")
        if attempt.finish is None:
            raise CompactionError(
                "summarization failed: the model stream ended without a finish", code="summary"
            )
        if attempt.finish_kind == "max-tokens":
            raise CompactionError(
                "summarization truncated at the token cap (incomplete checkpoint)", code="summary"
            )
        blocks, _replay = attempt.content()
        return Summary(
            output=blocks,
            provider=provider.name,
            model=model,
            max_tokens=request.max_tokens,
            usage=attempt.usage,
            llm_stream_call=True,
        )
