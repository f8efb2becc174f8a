"""Drop-in backends for agent frameworks, one module each, each behind its own extra.

The core never imports a framework: ``agentlog.adapters.openai_agents`` needs
``agentlog[openai-agents]``, ``pydantic_ai`` ``agentlog[pydantic-ai]``, ``adk``
``agentlog[adk]`` and ``langgraph`` ``agentlog[langgraph]``.
"""
