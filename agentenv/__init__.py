"""agentenv: AgentGym-compatible client library and the server kit shared by environment servers."""
