"""Hypothesis strategies for the adapter tests: items, messages and histories of each format."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from agentlog import messages as m

TEXT = st.text(max_size=12) | st.text(min_size=64, max_size=80)
"""Short texts, and some long enough for a session to keep them only in the message."""
IDS = st.text(alphabet="abcdefgh0123456789", min_size=1, max_size=8)
NAMES = st.sampled_from(["bash", "read_file", "add", "search"])
ARGUMENTS = st.sampled_from(['{"a":1}', "{}", '{"path":"README.md"}', "not json"])

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != 0.0 or str(f) == "0.0")
    | TEXT
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
"""Lossless JSON values (no NaN, no infinities, no -0.0, safe integers)."""


# --- Responses input items ----------------------------------------------------------------


def _input_parts(min_size: int = 0) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(
        TEXT.map(lambda t: {"type": "input_text", "text": t}), min_size=min_size, max_size=3
    )


@st.composite
def canonical_role_item(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "system", "developer"]))
    return {"type": "message", "role": role, "content": draw(_input_parts())}


@st.composite
def canonical_model_item(draw: st.DrawFn, call_id: str | None = None) -> dict[str, Any]:
    kind = "function_call" if call_id else draw(st.sampled_from(["message", "reasoning"]))
    if kind == "message":
        part = {"type": "output_text", "text": draw(TEXT), "annotations": []}
        return {"type": "message", "role": "assistant", "content": [part]}
    if kind == "reasoning":
        return {"type": "reasoning", "summary": [{"type": "summary_text", "text": draw(TEXT)}]}
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": draw(NAMES),
        "arguments": draw(ARGUMENTS),
    }


@st.composite
def canonical_output(draw: st.DrawFn, call_id: str) -> dict[str, Any]:
    output: Any = draw(TEXT | _input_parts(min_size=2))
    return {"type": "function_call_output", "call_id": call_id, "output": output}


@st.composite
def conversation(draw: st.DrawFn, *, canonical: bool = True) -> list[list[dict[str, Any]]]:
    """Batches as the SDK's runner writes them: user input, then each model step's items.

    A step's calls are answered by outputs in the same batch, so the derived history is valid.
    """
    batches: list[list[dict[str, Any]]] = []
    counter = 0
    for _turn in range(draw(st.integers(1, 3))):
        batches.append([draw(canonical_role_item() if canonical else sdk_user_item())])
        for _step in range(draw(st.integers(0, 2))):
            batch = [draw(canonical_model_item()) for _ in range(draw(st.integers(0, 2)))]
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                counter += 1
                calls.append(f"call{counter}")
                batch.append(draw(canonical_model_item(f"call{counter}")))
            for call_id in draw(st.permutations(calls)):
                batch.append(draw(canonical_output(call_id)))
            if batch:
                batches.append(batch)
        batches.append([draw(canonical_model_item().filter(lambda i: i["type"] == "message"))])
    return batches


@st.composite
def sdk_user_item(draw: st.DrawFn) -> dict[str, Any]:
    return draw(st.builds(lambda t: {"role": "user", "content": t}, TEXT) | canonical_role_item())


@st.composite
def any_item(draw: st.DrawFn) -> Any:
    """Any item a session may be given: SDK shapes with ids and statuses, others, unknown."""
    call_id = draw(IDS)
    return draw(
        st.one_of(
            sdk_user_item(),
            canonical_model_item(),
            canonical_model_item(call_id),
            canonical_output(call_id),
            st.builds(
                lambda i, t: {
                    "id": i,
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "text": t, "annotations": [], "logprobs": []}
                    ],
                },
                IDS,
                TEXT,
            ),
            st.builds(
                lambda c, t: {
                    "type": "custom_tool_call",
                    "call_id": c,
                    "name": "patch",
                    "input": t,
                },
                IDS,
                TEXT,
            ),
            st.builds(
                lambda c, o: {"type": "custom_tool_call_output", "call_id": c, "output": o},
                IDS,
                TEXT,
            ),
            st.builds(lambda e: {"type": "compaction", "encrypted_content": e}, TEXT),
            st.builds(
                lambda u: {
                    "role": "user",
                    "content": [{"type": "input_image", "image_url": u, "detail": "auto"}],
                },
                TEXT,
            ),
            st.dictionaries(TEXT, JSON, max_size=4),
            JSON_SCALARS,
        )
    )


# --- agentlog messages --------------------------------------------------------------------


@st.composite
def valid_history(draw: st.DrawFn) -> list[dict[str, Any]]:
    """An agentlog message history any provider accepts: every tool call answered in place."""
    history: list[dict[str, Any]] = []
    if draw(st.booleans()):
        history.append(m.system(draw(TEXT) or "be brief", turn=1, step=1)["message"])
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        history.append(dict(m.user([m.text(t) for t in draw(st.lists(TEXT, max_size=2))])))
        for _step in range(draw(st.integers(0, 2))):
            blocks: list[dict[str, Any]] = []
            if draw(st.booleans()):
                blocks.append(m.reasoning(draw(TEXT)))
            if draw(st.booleans()):
                blocks.append(m.text(draw(TEXT)))
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                counter += 1
                calls.append(f"c{counter}")
                blocks.append(m.tool_call(f"c{counter}", draw(NAMES), draw(ARGUMENTS)))
            history.append(m.assistant(blocks, provider="p", model="x", turn=1, step=1)["message"])
            for call_id in calls:
                texts = draw(st.lists(TEXT, min_size=1, max_size=2))
                history.append(
                    m.tool_result(call_id, [m.text(t) for t in texts], turn=1, step=1)["message"]
                )
        history.append(m.assistant(draw(TEXT), provider="p", model="x", turn=1, step=1)["message"])
    return history
