"""Our implementation of WebArena's own code, laid out as WebArena's repository is.

- `browser_env`: the browser (one Chromium per process, a context per env), WebArena's
  accessibility-tree observation and its id-based actions;
- `evaluation_harness`: WebArena's evaluators, `func:` helpers and the LLM judge;
- `agent` (+ `agent/prompts`): `PromptAgent`, `TeacherForcingAgent`, LLM backends, prompt templates;
- `run` (with `report`): the benchmark CLI, `python -m agentenv_webarena.run`;
- `auto_login`: writes the `.auth/<sites>_state.json` cookie files task configs name (WebArena's
  `--auth_folder`, default `.auth` in the working directory);
- `environment_docker/`: Dockerfile and compose files for our servers and WebArena's real sites.

`browser_env`, `evaluation_harness` and `agent` sit below the AgentGym environment
(`agentenv_webarena.environment`), which wraps them; `run` is an entry point on top of that
environment. Only `agent.llm`'s local-model provider imports the trainer (`verl`), lazily.
"""
