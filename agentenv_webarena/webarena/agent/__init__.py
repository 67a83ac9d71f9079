"""Agents for the WebArena benchmark CLI (`python -m agentenv_webarena.run`): `TeacherForcingAgent`,
`PromptAgent` with its LLM backends (`llm`) and prompt templates (`prompts`), and `construct_agent`."""
from agentenv_webarena.webarena.agent.agent import (
    AGENT_TYPES,
    Agent,
    AgentOutput,
    PromptAgent,
    TeacherForcingAgent,
    construct_agent,
)

__all__ = ["AGENT_TYPES", "Agent", "AgentOutput", "PromptAgent", "TeacherForcingAgent", "construct_agent"]
