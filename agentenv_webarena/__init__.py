"""WebArena environment server: Playwright-driven Chromium, WebArena's observations, actions and
evaluators, embedded sites and task suite (`python -m agentenv_webarena.launch`)."""
