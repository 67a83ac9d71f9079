"""Single-turn rollout (chat-prompt rows of non-environment datasets)."""
