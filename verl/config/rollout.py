"""`actor_rollout_ref.rollout` (the engine, sampling, the multi-turn agent loop) and
`actor_rollout_ref.agentgym` (the environment servers the agent talks to)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, List, Optional

from verl.config.loader import check_choice, check_positive
from verl.config.models import DTYPES

__all__ = ["ValKwargsConfig", "MultiTurnConfig", "AgentLoopConfig", "RolloutConfig", "EnvServersConfig",
           "AgentGymConfig"]


@dataclass(frozen=True)
class ValKwargsConfig:
    """`actor_rollout_ref.rollout.val_kwargs`: sampling during validation."""

    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = -1
    n: int = 1
    do_sample: bool = False

    def __post_init__(self):
        check_positive("actor_rollout_ref.rollout.val_kwargs.n", self.n)
        check_positive("actor_rollout_ref.rollout.val_kwargs.temperature", self.temperature, allow_zero=True)
        if self.temperature > 0 and not self.do_sample:
            raise ValueError(
                f"actor_rollout_ref.rollout.val_kwargs.temperature={self.temperature} has no effect while "
                "val_kwargs.do_sample=false (validation is greedy); set val_kwargs.do_sample=true for a sampled "
                "validation pass at that temperature, or leave the temperature at 0")


@dataclass(frozen=True)
class MultiTurnConfig:
    """`actor_rollout_ref.rollout.multi_turn` (verl's keys): run verl interactions through the agent loop.

    With `enable`, the interactions in `interaction_config_path` (verl's YAML) drive the rows whose
    `extra_info.interaction_kwargs` name one, through the same agent loop as `agentgym.task_name`.
    """

    enable: bool = False
    max_user_turns: Optional[int] = None        # null: agentgym.max_rounds (one user turn per env step)
    max_assistant_turns: Optional[int] = None   # null: agentgym.max_rounds
    interaction_config_path: Optional[str] = None

    def __post_init__(self):
        p = "actor_rollout_ref.rollout.multi_turn"
        if self.enable and not self.interaction_config_path:
            raise ValueError(f"{p}.enable=true needs {p}.interaction_config_path (verl's interaction YAML)")
        check_positive(f"{p}.max_user_turns", self.max_user_turns)
        check_positive(f"{p}.max_assistant_turns", self.max_assistant_turns)


@dataclass(frozen=True)
class AgentLoopConfig:
    """`actor_rollout_ref.rollout.agent` (verl's keys): which agent loop runs a row."""

    compat_keys: ClassVar[dict[str, str]] = {"num_workers": "one asyncio agent loop per rank serves every trajectory"}

    default_agent_loop: str = "tool_agent"   # tool_agent: multi-turn (env / interaction); single_turn_agent
    num_workers: int = 1                     # verl's AgentLoopWorker count; one asyncio loop serves all here

    def __post_init__(self):
        check_choice("actor_rollout_ref.rollout.agent.default_agent_loop", self.default_agent_loop,
                      ("tool_agent", "single_turn_agent"))
        check_positive("actor_rollout_ref.rollout.agent.num_workers", self.num_workers)


@dataclass(frozen=True)
class RolloutConfig:
    """`actor_rollout_ref.rollout`: the engine and the multi-turn agent loop."""

    compat_keys: ClassVar[dict[str, str]] = {
        "mode": "the agent loop is always asynchronous",
        "load_format": "the engine loads the checkpoint at model.path, then receives synced weights"}

    name: str = "auto"
    mode: str = "async"
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    max_tokens: int = 1024
    max_model_len: int = 32768
    dtype: str = "bfloat16"
    gpu_memory_utilization: float = 0.5
    tensor_model_parallel_size: int = 1
    enforce_eager: Optional[bool] = None  # null (auto): eager on CPU, CUDA graphs on CUDA
    per_request_seed: Optional[bool] = None  # vLLM: seed each request (null: only on CPU; slow on a GPU)
    free_cache_engine: Optional[bool] = None  # release the engine's GPU memory around the actor update; null: on CUDA
    load_format: str = "dummy_dtensor"
    max_num_batched_tokens: int = 8192
    max_num_seqs: int = 1024
    enable_prefix_caching: bool = True
    # KV-cache GiB: vLLM on CPU (VLLM_CPU_KVCACHE_SPACE; null: 1); the HF engine's budget for live rows and
    # stored prefixes together (null: a quarter of host memory on CPU, gpu_memory_utilization on CUDA)
    kv_cache_space_gb: Optional[float] = None
    prefix_cache_tokens: Optional[int] = None   # HF engine: finished turns' KV kept; null: what the budget leaves
    stop_at_action_end: bool = True             # end a turn where the env's parser ends the action
    logprobs_mode: str = "processed_logprobs"   # vLLM: log-probs after temperature/top-p (processed_*) or raw_*
    update_weights_bucket_megabytes: int = 512  # weight sync: MiB per bucket pushed into the engine
    log_prob_micro_batch_size_per_gpu: int = 1
    log_prob_use_dynamic_bsz: bool = False       # old log-probs in token-budget micro-batches (YAML follows actor's)
    log_prob_max_token_len_per_gpu: int = 16384  # their budget in real tokens
    max_concurrency: Optional[int] = None      # trajectories in flight per worker; null: all of the batch
    send_interval: float = 0.0
    seed: int = 0
    rollout_log_dir: Optional[str] = None
    system_prompt: Optional[str] = None      # null: the model family's default (Qwen line for Qwen)
    stop_token_ids: List[int] = field(default_factory=list)  # extra ids that end a turn (besides EOS)
    copy_only_tokens: Optional[str] = None   # regex: matching vocabulary tokens only when already in the context
    val_kwargs: ValKwargsConfig = field(default_factory=ValKwargsConfig)
    multi_turn: MultiTurnConfig = field(default_factory=MultiTurnConfig)
    agent: AgentLoopConfig = field(default_factory=AgentLoopConfig)
    prompt_length: Optional[int] = None      # verl's name of data.max_prompt_length (must agree when set)
    response_length: Optional[int] = None    # verl's name of data.max_response_length (must agree when set)

    def __post_init__(self):
        p = "actor_rollout_ref.rollout"
        check_choice(f"{p}.name", self.name, ("auto", "hf", "vllm", "sglang"))
        check_choice(f"{p}.mode", self.mode, ("async", "sync"))
        check_choice(f"{p}.dtype", self.dtype, DTYPES)
        check_positive(f"{p}.prefix_cache_tokens", self.prefix_cache_tokens, allow_zero=True)
        for key in ("n", "max_tokens", "max_model_len", "tensor_model_parallel_size",
                    "log_prob_micro_batch_size_per_gpu", "update_weights_bucket_megabytes",
                    "log_prob_max_token_len_per_gpu"):
            check_positive(f"{p}.{key}", getattr(self, key))
        check_positive(f"{p}.temperature", self.temperature, allow_zero=True)
        if not 0 < self.top_p <= 1:
            raise ValueError(f"{p}.top_p must be in (0, 1], got {self.top_p}")
        if not 0 < self.gpu_memory_utilization <= 1:
            raise ValueError(f"{p}.gpu_memory_utilization must be in (0, 1], got {self.gpu_memory_utilization}")
        check_positive(f"{p}.send_interval", self.send_interval, allow_zero=True)
        check_positive(f"{p}.kv_cache_space_gb", self.kv_cache_space_gb)
        check_positive(f"{p}.max_concurrency", self.max_concurrency)
        check_choice(f"{p}.logprobs_mode", self.logprobs_mode,
                      ("processed_logprobs", "raw_logprobs", "processed_logits", "raw_logits"))
        if self.copy_only_tokens is not None:
            try:
                re.compile(self.copy_only_tokens)
            except re.error as exc:
                raise ValueError(f"{p}.copy_only_tokens is not a regular expression "
                                 f"({self.copy_only_tokens!r}: {exc})") from None


@dataclass(frozen=True)
class EnvServersConfig:
    """`actor_rollout_ref.agentgym.env_servers`: env servers launched as Ray actors (the env fleet).

    With `num > 0` the trainer starts `num` servers on the cluster (GPU-less nodes first), waits
    until each answers, uses their addresses as `agentgym.env_addr` and stops them at the end.
    """

    num: int = 0                 # servers to launch; 0: none (attach to agentgym.env_addr)
    per_node: int = 0            # most servers on one node; 0: no cap (spread evenly over the nodes)
    # Ray resources each server actor holds: CPU (fractional is fine), GPU, and custom node labels
    # (e.g. {CPU: 1, env_node: 1} with `ray start --resources '{"env_node": 8}'` on the env nodes)
    resources: dict = field(default_factory=lambda: {"CPU": 0.25})
    # launch command with {python}, {host}, {port} filled in; null: `{python} -m agentenv_<task_name>.launch
    # --host {host} --port {port} --log-level warning`
    cmd: Optional[str] = None
    startup_timeout: float = 180  # seconds for every server to answer GET / before the run fails

    def __post_init__(self):
        p = "actor_rollout_ref.agentgym.env_servers"
        check_positive(f"{p}.num", self.num, allow_zero=True)
        check_positive(f"{p}.per_node", self.per_node, allow_zero=True)
        check_positive(f"{p}.startup_timeout", self.startup_timeout)
        for key, value in self.resources.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{p}.resources.{key}={value!r} must be a number >= 0 (Ray resource units)")
        if self.cmd is not None and "{port}" not in self.cmd:
            raise ValueError(f"{p}.cmd={self.cmd!r} must contain {{port}} (each server gets a free port), e.g. "
                             "'{python} -m agentenv_webshop.launch --host {host} --port {port}'")


@dataclass(frozen=True)
class AgentGymConfig:
    """`actor_rollout_ref.agentgym`: which environment servers the agent talks to."""

    task_name: str = "webshop"
    env_addr: Any = "http://127.0.0.1:36001"  # one server URL or a list of them (sessions spread by load)
    max_retries: int = 10
    timeout: float = 300
    max_rounds: int = 10
    data_len: int = 0          # AgentGym's client argument (number of items the server holds; 0: unknown)
    max_failed_frac: float = 0.5  # a training rollout with more failed trajectories (env errors) aborts
    health_timeout: float = 5.0   # seconds for the GET / probe of a server whose session just failed
    server_backoff_s: float = 5.0  # a server out of rotation is probed again after this; doubles per failed probe
    server_max_backoff_s: float = 120.0
    # cap on each observation in tokens of the policy's tokenizer, cut where the env's benchmark cuts
    # (WebArena: the accessibility tree); null: the env's benchmark cap (webarena 1920, webshop none); 0: none
    max_obs_tokens: Optional[int] = None
    env_servers: EnvServersConfig = field(default_factory=EnvServersConfig)

    def __post_init__(self):
        p = "actor_rollout_ref.agentgym"
        if not 0.0 <= float(self.max_failed_frac) <= 1.0:
            raise ValueError(f"{p}.max_failed_frac={self.max_failed_frac!r} must be in [0, 1] "
                             "(the fraction of failed trajectories a training step tolerates)")
        if not self.task_name:
            raise ValueError(f"{p}.task_name is empty; choose webshop or webarena")
        env_urls(f"{p}.env_addr", self.env_addr)
        check_positive(f"{p}.max_retries", self.max_retries, allow_zero=True)
        check_positive(f"{p}.timeout", self.timeout)
        check_positive(f"{p}.max_rounds", self.max_rounds)
        check_positive(f"{p}.data_len", self.data_len, allow_zero=True)
        check_positive(f"{p}.max_obs_tokens", self.max_obs_tokens, allow_zero=True)
        check_positive(f"{p}.health_timeout", self.health_timeout)
        check_positive(f"{p}.server_backoff_s", self.server_backoff_s)
        if self.server_max_backoff_s < self.server_backoff_s:
            raise ValueError(f"{p}.server_max_backoff_s={self.server_max_backoff_s} is below "
                             f"{p}.server_backoff_s={self.server_backoff_s}; raise it or lower the back-off")

    @property
    def env_addrs(self) -> list[str]:
        """`env_addr` as a list of base URLs without a trailing slash (a single string is one server)."""
        return env_urls("actor_rollout_ref.agentgym.env_addr", self.env_addr)


def env_urls(key: str, value: Any) -> list[str]:
    """One env server URL or a list of them, as base URLs without a trailing slash; a value that is
    empty, not http(s) or names a server twice fails naming `key`."""
    addrs = [value] if isinstance(value, str) else list(value)
    if not addrs:
        raise ValueError(f"{key} is an empty list; give at least one URL such as http://127.0.0.1:36001")
    for addr in addrs:
        if not isinstance(addr, str) or not addr.startswith(("http://", "https://")):
            raise ValueError(f"{key}={addr!r} must be an http(s) URL such as http://127.0.0.1:36001")
    urls = [a.rstrip("/") for a in addrs]
    if len(set(urls)) < len(urls):
        raise ValueError(f"{key}={addrs!r} names a server twice; list each server once")
    return urls
