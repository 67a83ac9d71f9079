"""The one multi-turn agent loop: asyncio trajectories over a token-in/token-out engine and env clients.

Per trajectory (row of the input batch):
  1. reset an env session for the item id (`webshop_123` -> goal 123) from a pool of live clients;
  2. build the chat (system line + the client's `conversation_start` + first observation) with the
     tokenizer's chat template; its ids are the prompt;
  3. each turn: generate up to `rollout.max_tokens` new ids (stop at EOS, or where the env's parser ends the
     action: the client's `action_end`, `rollout.stop_at_action_end`), keep the SAMPLED ids and
     their log-probs (response_mask 1, including the EOS the model produced), decode them only to
     parse the action, step the env in a worker thread, and append the observation turn as the
     chat-template delta "<end of assistant turn><user turn><assistant header>" (mask 0);
  4. stop when the env says done, at the round limit (`meta_info["max_rounds"]`), or when the token
     budget (`data.max_response_length`, `rollout.max_model_len`) is used up.

Each observation (the first one too) is cut to `agentgym.max_obs_tokens` tokens of the policy's tokenizer
by the env client's `cap_observation` hook before it enters the chat (WebArena's client cuts the
accessibility tree only, as WebArena does; null: the env's benchmark cap). The cut text is what the
messages record and what is tokenized into the context, so the tokens trained on are the tokens shown.

Model output is never re-encoded: the ids trained on are exactly the ids sampled. When a turn hits
`max_tokens` without EOS, the closing tokens appended to keep the chat well-formed carry mask 0.
The final reward (the last env step's reward, AgentGym's convention) sits on the last model token.
Sessions are spread over the servers of `agentgym.env_addr` by load (`EnvClientPool`); a server
that stops answering leaves the rotation until a back-off passes, and each row records the server
it ran on (`env_server`). An env failure (server down, timeout, `EnvClientError`; never a bug's
exception) ends only that trajectory: `env_error` is recorded, its reward is 0, its tokens are
masked out of the loss and it leaves its group (its uid gets an `#env_error` suffix), so the policy
is not punished for the infrastructure and group baselines see only real samples. An episode the
env could not score because it needs an LLM judge (final `info["eval_status"] == "needs_judge"`: no judge
configured, or it failed) is left out the same way (`needs_judge` column, uid suffix `#needs_judge`): its
reward 0 is no outcome. A training
rollout where more than `agentgym.max_failed_frac` of the trajectories failed (over all ranks) is
stopped by the trainer with `check_env_failures`. Rows with a `prompt` (chat messages, non-env
datasets) run one turn.

Sampling seeds come from (rollout.seed, step, mode, global row): the trainer numbers the rows of the
whole batch (`non_tensor_batch["rollout_row"]`) before splitting it across ranks, so two ranks never
share a seed.

Env calls run in a dedicated thread pool, so env calls of different trajectories overlap each other
and generation; the engine batches the generate calls that are waiting at the same time.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hashlib
import json
import logging
import os
import sys
import time
import weakref
from typing import Any, Callable

import numpy as np
import torch

from agentenv.controller.env import BaseEnvClient
from agentenv.controller.tokens import HFTokenCodec
from agentenv.controller.types import ResetResult, StepResult, is_success, needs_judge
from verl.config.schema import AgentGymConfig, DataConfig, RolloutConfig, as_section
from verl.protocol import DataProto, to_object_array
from verl.utils.agentgym.client import EnvClientPool, envclient_classes
from verl.utils.agentgym.servers import env_server_metrics
from verl.utils.dataset import parse_item_id
from verl.workers.copy_only import CopyOnlyRule, banned_in_context, copy_only_rule
from verl.workers.rollout.base import RolloutEngine, SamplingParams
from verl.workers.rollout.naive.naive_rollout import SingleTurnBudget, single_turn_trajectory
from verl.workers.rollout.schemas import Trajectory
from verl.workers.rollout.stop_rules import ActionEndRule
from verl.workers.rollout.tokenizer import (
    chat_template_pieces,
    encode_text,
    initial_messages,
    observation_token_ids,
    render_chat,
    resolve_system_prompt,
)

__all__ = ["AgentLoop", "NEEDS_JUDGE_UID_SUFFIX", "TooManyEnvFailures", "check_env_failures"]

logger = logging.getLogger(__name__)

# uid of a row that needs an LLM judge: `<group uid>#needs_judge<row>` (out of its group; validation strips it)
NEEDS_JUDGE_UID_SUFFIX = "#needs_judge"



class _ActivityClock:
    """Wall time split by what is in flight (generation, env calls, both, neither).

    All transitions happen on the event-loop thread, so no lock is needed.
    """

    def __init__(self):
        self.gen = 0
        self.env = 0
        self.t = time.perf_counter()
        self.buckets = {"gen_only": 0.0, "env_only": 0.0, "both": 0.0, "idle": 0.0}

    def _tick(self):
        now = time.perf_counter()
        key = ("both" if self.env else "gen_only") if self.gen else ("env_only" if self.env else "idle")
        self.buckets[key] += now - self.t
        self.t = now

    def enter(self, kind: str):
        self._tick()
        setattr(self, kind, getattr(self, kind) + 1)

    def leave(self, kind: str):
        self._tick()
        setattr(self, kind, getattr(self, kind) - 1)

    def finish(self) -> dict:
        self._tick()
        return dict(self.buckets)


class AgentLoop:
    """Runs a batch of trajectories against env servers through a `RolloutEngine`.

    Args:
        engine: the rollout engine (HF, vLLM).
        tokenizer: HF tokenizer with a chat template (its EOS ends a turn).
        rollout_config: `actor_rollout_ref.rollout` (`RolloutConfig` or a mapping of its keys; n is
            applied by the trainer, not here).
        agentgym_config: `actor_rollout_ref.agentgym` (`AgentGymConfig` or a mapping of its keys).
        data_config: `data`: any typed section with max_prompt_length / max_response_length
            (`DataConfig`, the evaluation's data section), or a mapping of `DataConfig` keys.
        env_client_factory: optional zero-argument callable building an env client (tests pass a
            fake); default: the agentgym client for `task_name`.
    """

    def __init__(self, engine: RolloutEngine, tokenizer, rollout_config: Any, agentgym_config: Any, data_config: Any,
                 env_client_factory: Callable[[], Any] | None = None):
        self.engine = engine
        self.tokenizer = tokenizer
        self.rollout_config = rollout = as_section(RolloutConfig, rollout_config, "actor_rollout_ref.rollout")
        self.agentgym_config = agentgym = as_section(AgentGymConfig, agentgym_config, "actor_rollout_ref.agentgym")
        self.data_config = data = (data_config if dataclasses.is_dataclass(data_config)
                                   else as_section(DataConfig, data_config, "data"))
        self.max_prompt_length, self.max_response_length = data.max_prompt_length, data.max_response_length
        self.max_model_len, self.max_tokens = rollout.max_model_len, rollout.max_tokens
        limit = getattr(engine, "max_positions", None)
        if isinstance(limit, int) and 0 < limit < self.max_model_len:
            # past its position embeddings a model does not fail, it degrades: trajectories stop at its limit
            logger.warning("rollout.max_model_len=%d is longer than the model's %d positions "
                           "(max_position_embeddings): trajectories stop at %d tokens", self.max_model_len, limit,
                           limit)
            self.max_model_len = limit
        self.max_concurrency, self.send_interval = rollout.max_concurrency, rollout.send_interval
        self.seed, self.log_dir = rollout.seed, rollout.rollout_log_dir
        # null: the model family's default (Qwen's line for Qwen models, else none); "" for none
        self.system_prompt = resolve_system_prompt(rollout.system_prompt, tokenizer)
        self.task_name, self.default_max_rounds = agentgym.task_name, agentgym.max_rounds
        turns = [t for t in (rollout.multi_turn.max_assistant_turns, rollout.multi_turn.max_user_turns) if t]
        self.max_interaction_turns = min(turns) if turns else None
        self.pool = EnvClientPool(agentgym.env_addrs, agentgym.task_name, data_len=agentgym.data_len,
                                  timeout=agentgym.timeout, max_retries=agentgym.max_retries,
                                  health_timeout=agentgym.health_timeout, backoff_s=agentgym.server_backoff_s,
                                  max_backoff_s=agentgym.server_max_backoff_s, factory=env_client_factory)
        env_cls = envclient_classes.get(self.task_name)
        self.max_obs_tokens = (agentgym.max_obs_tokens if agentgym.max_obs_tokens is not None
                               else getattr(env_cls, "default_max_obs_tokens", 0))
        self._obs_codec = HFTokenCodec(tokenizer)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        if tokenizer.eos_token_id is None:
            raise ValueError("the tokenizer has no eos_token; the agent loop needs it to end a turn")
        self.stop_ids = tuple(sorted({int(tokenizer.eos_token_id), *map(int, rollout.stop_token_ids)}))
        # whole-token ids: a static ban per turn; ids split into several tokens: a per-step rule (copy_only.py)
        rule = copy_only_rule(tokenizer, rollout.copy_only_tokens) if rollout.copy_only_tokens else None
        self.copy_only_ids = rule.id_set if isinstance(rule, CopyOnlyRule) else frozenset()
        self.copy_only_sequences = rule if rule is not None and not isinstance(rule, CopyOnlyRule) else None
        if self.copy_only_sequences is not None and not engine.bans_sequences:
            raise ValueError(f"actor_rollout_ref.rollout.copy_only_tokens={rollout.copy_only_tokens!r}: this "
                             f"tokenizer splits ids into several tokens, which needs an engine that bans token "
                             f"sequences (hf, vllm); {type(engine).__name__} cannot: set rollout.name=hf or vllm, "
                             f"or copy_only_tokens=null")
        if rule is not None and not engine.bans_tokens:
            raise ValueError(f"actor_rollout_ref.rollout.copy_only_tokens needs an engine that can ban tokens "
                             f"(hf, vllm); {type(engine).__name__} cannot: set rollout.name=hf or vllm")
        self._closing, self._obs_template = self._template_pieces()
        # end each turn where the env's parser ends the action (the client's `action_end`), when the engine can
        self.action_end = self._action_end_rule(env_cls, rollout.stop_at_action_end)
        # env calls are I/O: one thread per trajectory in flight (threads start lazily)
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=max(2, self.max_concurrency or 256),
                                                               thread_name_prefix="env")
        self.total_env_errors = 0
        self.total_trajectories = 0
        self.total_needs_judge = 0
        # close pooled server sessions even if the owner never calls close()
        self._finalizer = weakref.finalize(self, _close_resources, self.pool, self._executor)

    def _action_end_rule(self, env_cls, enabled: bool) -> ActionEndRule | None:
        """The env client's `action_end` as a stop rule (None: off, not declared, or the engine cannot)."""
        end = getattr(env_cls, "action_end", None)
        if not enabled or end is None:
            return None
        if not self.engine.stops_on_rules:
            logger.info("%s does not honour stop rules: turns of %s end at EOS or max_tokens, not at the "
                        "action's end", type(self.engine).__name__, self.task_name)
            return None
        return ActionEndRule(self.tokenizer, *end)

    # ------------------------------------------------------------------ public API
    def run(self, batch: DataProto) -> DataProto:
        """Roll out every row of `batch` (see the module docstring).

        Returns a DataProto with the rollout keys of the table at the top of ``verl/protocol.py``.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run_async(batch))
        # Called from inside an event loop (e.g. an async actor): run ours in a helper thread.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as ex:
            return ex.submit(asyncio.run, self.run_async(batch)).result()

    async def run_async(self, batch: DataProto) -> DataProto:
        """Coroutine version of `run`."""
        meta = dict(batch.meta_info or {})
        validate = bool(meta.get("validate", False))
        max_rounds = int(meta.get("max_rounds") or self.default_max_rounds)
        global_step = int(meta.get("global_step", 0))
        ntb = batch.non_tensor_batch
        n = len(batch)
        if "item_id" not in ntb and "prompt" not in ntb:
            raise ValueError(
                "AgentLoop.run: the batch needs non_tensor_batch['item_id'] (env rows) or ['prompt'] (chat rows)"
            )
        item_ids = [str(x) for x in ntb.get("item_id", [f"row_{i}" for i in range(n)])]
        rows = [int(r) for r in ntb["rollout_row"]] if "rollout_row" in ntb else list(range(n))
        prompts = ntb.get("prompt")
        env_ids = list(item_ids)  # what an env row resets to; the rows keep their own item ids
        interaction_rows = self._interaction_rows(ntb, env_ids)
        if interaction_rows:
            max_rounds = min(max_rounds, self.max_interaction_turns or max_rounds)

        clock = _ActivityClock()
        engine_before = _engine_counters(self.engine)
        sem = asyncio.Semaphore(self.max_concurrency or max(n, 1))
        t0 = time.perf_counter()
        progress = _progress(n, validate)

        async def one(i: int) -> Trajectory:
            async with sem:
                seed_base = _seed(self.seed, global_step, int(validate), rows[i])
                sampling = self._sampling(validate, meta.get("val_temperature"))
                chat = prompts[i] if prompts is not None and i not in interaction_rows else None
                if chat is not None and not (isinstance(chat, float) and np.isnan(chat)):
                    traj = await self._single_turn(item_ids[i], _as_messages(chat), sampling, seed_base, clock)
                else:
                    traj = await self._env_trajectory(env_ids[i], sampling, seed_base, max_rounds, clock)
                    traj.item_id = item_ids[i]
            if progress is not None:
                progress.update(1)
            return traj

        trajs = await asyncio.gather(*(one(i) for i in range(n)))
        if progress is not None:
            progress.close()
        wall = time.perf_counter() - t0
        buckets = clock.finish()
        out = self._to_dataproto(trajs, batch)
        out.meta_info.update(self._metrics(trajs, buckets, wall, max_rounds))
        out.meta_info.update(_engine_metrics(engine_before, _engine_counters(self.engine), wall))
        for k in ("global_step", "validate", "max_rounds"):
            if k in meta:
                out.meta_info[k] = meta[k]
        self._report_errors(trajs)
        self._dump(trajs, global_step, validate)
        return out

    def _interaction_rows(self, ntb: dict, env_ids: list[str]) -> set[int]:
        """Rows of verl's interaction recipe (`extra_info.interaction_kwargs`) when `rollout.multi_turn`
        is on with the tool agent: they run as env rows of task `session_id` (`env_ids` updated);
        their chat prompt is rebuilt from the env's conversation start and first observation."""
        multi_turn, agent = self.rollout_config.multi_turn, self.rollout_config.agent
        extra = ntb.get("extra_info")
        if not multi_turn.enable or agent.default_agent_loop != "tool_agent" or extra is None:
            return set()
        found = set()
        for i, info in enumerate(extra):
            kwargs = info.get("interaction_kwargs") if isinstance(info, dict) else None
            if kwargs:
                if "session_id" not in kwargs:
                    raise ValueError(f"row {i}: extra_info.interaction_kwargs needs session_id (the task index), "
                                     f"got {dict(kwargs)}")
                env_ids[i] = f"{self.task_name}_{int(kwargs['session_id'])}"
                found.add(i)
        return found

    def close(self) -> None:
        """Close pooled env sessions and the env thread pool (the engine is the caller's); idempotent."""
        self._finalizer()

    # ------------------------------------------------------------------ trajectories
    async def _env_trajectory(self, item_id: str, sampling: SamplingParams, seed_base: int, max_rounds: int,
                              clock: _ActivityClock) -> Trajectory:
        traj = Trajectory(item_id=item_id)
        task, index = parse_item_id(item_id)
        if task != self.task_name:
            raise ValueError(f"item id {item_id!r} belongs to task {task!r} but actor_rollout_ref.agentgym.task_name="
                             f"{self.task_name!r}; use a data file of {self.task_name} item ids "
                             "or change the task name")
        client = None
        try:
            client, observation = await self._reset(index, traj, clock)
            observation = self._shown(client, observation)
            traj.messages = self._initial_messages(client, observation)
            traj.prompt_ids = self._encode(self._render(traj.messages, add_generation_prompt=True))
            if len(traj.prompt_ids) > self.max_prompt_length:
                traj.env_error = (f"prompt_too_long: {len(traj.prompt_ids)} tokens > data.max_prompt_length="
                                  f"{self.max_prompt_length}")
                traj.truncated = True
                return traj
            budget = min(self.max_response_length, self.max_model_len - len(traj.prompt_ids))
            for turn in range(max_rounds):
                room = budget - len(traj.response_ids)
                if room < 1:
                    traj.truncated = True
                    break
                traj.anchor_obs.append(observation)
                gen = await self._generate(traj, min(self.max_tokens, room), sampling, seed_base + turn, clock)
                traj.num_turns += 1
                text = self.tokenizer.decode(gen.token_ids, skip_special_tokens=True)
                traj.messages.append({"role": "assistant", "content": text})
                budget_hit = gen.finish_reason != "stop" and len(gen.token_ids) >= room
                if budget_hit:  # the trajectory budget ran out mid-turn: no env step on a cut-off action
                    traj.truncated = True
                    break
                if self.send_interval > 0:
                    await asyncio.sleep(self.send_interval)
                step = await self._env_call(clock, traj, client.step, text)
                if not isinstance(step, StepResult):
                    raise TypeError(f"{type(client).__name__}.step must return agentenv.controller.StepResult, "
                                    f"got {type(step).__name__}")
                state, reward = self._shown(client, step.observation), float(step.reward)
                traj.invalid_actions += int(isinstance(step.info, dict) and step.info.get("valid") is False)
                traj.turn_rewards.append(reward)
                traj.reward = reward
                traj.messages.append({"role": "user", "content": state})
                if step.done:
                    traj.terminated, traj.truncated = step.terminated, step.truncated
                    traj.needs_judge = needs_judge(step.info)
                    break
                if turn == max_rounds - 1:
                    traj.truncated = True
                    break
                # the turn's end token when it ended on one (a stop rule ends it mid-text: the closing is added)
                stop_tok = gen.token_ids[-1] if gen.token_ids and gen.token_ids[-1] in self.stop_ids else None
                obs_ids = self._observation_ids(state, stop_tok)
                if len(traj.response_ids) + len(obs_ids) >= budget:
                    traj.truncated = True
                    break
                traj.add_context_tokens(obs_ids)
                observation = state
        except Exception as exc:  # env failure: this trajectory fails, the step goes on
            if not _is_env_error(exc):
                raise
            traj.env_error = f"{type(exc).__name__}: {exc}"
            traj.reward = 0.0
            if client is not None:
                self.pool.release(client, healthy=False)
                client = None
        finally:
            if client is not None:
                self.pool.release(client, healthy=True)
        return traj

    async def _single_turn(self, item_id: str, messages: list[dict], sampling: SamplingParams, seed_base: int,
                           clock: _ActivityClock) -> Trajectory:
        budget = SingleTurnBudget(self.max_prompt_length, self.max_response_length, self.max_model_len, self.max_tokens)
        return await single_turn_trajectory(
            self.tokenizer, item_id, messages, budget,
            lambda traj, room: self._generate(traj, room, sampling, seed_base, clock, at_action_end=False))

    async def _reset(self, index: int, traj: Trajectory, clock: _ActivityClock):
        """Acquire a client and reset it to `index`; a stale pooled client gets one fresh retry."""
        for attempt in range(2):
            reused_before = self.pool.reused
            client = await self._env_call(clock, traj, self.pool.acquire)
            was_reused = self.pool.reused > reused_before
            traj.env_server = self.pool.server_of(client)
            try:
                result = await self._env_call(clock, traj, client.reset, index)
                if not isinstance(result, ResetResult):  # a contract violation is a bug, not an env error
                    raise TypeError(f"{type(client).__name__}.reset must return agentenv.controller.ResetResult, "
                                    f"got {type(result).__name__}")
                return client, result.observation
            except Exception as exc:
                self.pool.release(client, healthy=False)
                if attempt == 0 and was_reused and _is_env_error(exc):
                    logger.info("reset on a pooled env session failed (%s); retrying with a new session", exc)
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _generate(self, traj: Trajectory, max_tokens: int, sampling: SamplingParams, seed: int,
                        clock: _ActivityClock, at_action_end: bool = True):
        context = traj.prompt_ids + traj.response_ids
        banned = banned_in_context(self.copy_only_ids, context) if self.copy_only_ids else ()
        rule = self.copy_only_sequences.turn_rule(context) if self.copy_only_sequences is not None else None
        params = SamplingParams(max_tokens=max_tokens, temperature=sampling.temperature, top_p=sampling.top_p,
                                top_k=sampling.top_k, stop_token_ids=self.stop_ids, seed=seed,
                                banned_token_ids=banned, token_rule=rule,
                                stop_rule=(self.action_end.for_request()
                                           if self.action_end is not None and at_action_end else None))
        clock.enter("gen")
        t = time.perf_counter()
        try:
            gen = await self.engine.generate(traj.prompt_ids + traj.response_ids, params)
        finally:
            traj.gen_s += time.perf_counter() - t
            clock.leave("gen")
        if len(gen.log_probs) != len(gen.token_ids):
            raise RuntimeError(f"engine returned {len(gen.token_ids)} ids but {len(gen.log_probs)} log-probs")
        if gen.finish_reason != "stop" and gen.token_ids and gen.token_ids[-1] in self.stop_ids:
            # vLLM reports a stop token sampled exactly at max_tokens as "length"; the turn did end
            gen = dataclasses.replace(gen, finish_reason="stop")
        traj.add_model_tokens(list(gen.token_ids), list(gen.log_probs))
        return gen

    async def _env_call(self, clock: _ActivityClock, traj: Trajectory, fn, *args):
        loop = asyncio.get_running_loop()
        clock.enter("env")
        t = time.perf_counter()
        try:
            return await loop.run_in_executor(self._executor, fn, *args)
        finally:
            traj.env_s += time.perf_counter() - t
            clock.leave("env")

    # ------------------------------------------------------------------ chat / tokens
    def _sampling(self, validate: bool, val_temperature: float | None = None) -> SamplingParams:
        """Training: rollout.{temperature, top_p, top_k}; validation: val_kwargs, with the temperature
        overridable per call (meta_info["val_temperature"]: the trainer's greedy and sampled passes)."""
        cfg = self.rollout_config
        if validate:
            val = cfg.val_kwargs
            temperature = val_temperature if val_temperature is not None else val.temperature
            return SamplingParams(max_tokens=self.max_tokens, temperature=float(temperature), top_p=val.top_p,
                                  top_k=val.top_k)
        return SamplingParams(max_tokens=self.max_tokens, temperature=cfg.temperature, top_p=cfg.top_p,
                              top_k=cfg.top_k)

    def _shown(self, client, observation: str) -> str:
        """The observation as the policy sees it: cut to `max_obs_tokens` by the client's hook."""
        if not self.max_obs_tokens:
            return observation
        # a duck-typed client without the hook gets the default: the whole text is cut
        cap = getattr(client, "cap_observation", BaseEnvClient.cap_observation)
        return cap(observation, self._obs_codec, self.max_obs_tokens)

    def _initial_messages(self, client, observation: str) -> list[dict]:
        return initial_messages(self.system_prompt, getattr(client, "conversation_start", ()), observation)

    def _render(self, messages: list[dict], add_generation_prompt: bool) -> str:
        return render_chat(self.tokenizer, messages, add_generation_prompt)

    def _encode(self, text: str) -> list[int]:
        return encode_text(self.tokenizer, text)

    def _template_pieces(self) -> tuple[str, tuple[str, str]]:
        return chat_template_pieces(self.tokenizer)

    def _observation_ids(self, observation: str, stop_token: int | None) -> list[int]:
        return observation_token_ids(self.tokenizer, (self._closing, self._obs_template), observation, stop_token)

    # ------------------------------------------------------------------ output
    def _to_dataproto(self, trajs: list[Trajectory], batch: DataProto) -> DataProto:
        n, P, R = len(trajs), self.max_prompt_length, self.max_response_length
        prompts = torch.full((n, P), self.pad_id, dtype=torch.long)
        prompt_attn = torch.zeros((n, P), dtype=torch.long)
        responses = torch.full((n, R), self.pad_id, dtype=torch.long)
        resp_attn = torch.zeros((n, R), dtype=torch.long)
        response_mask = torch.zeros((n, R), dtype=torch.long)
        log_probs = torch.zeros((n, R), dtype=torch.float32)
        scores = torch.zeros((n, R), dtype=torch.float32)
        for i, t in enumerate(trajs):
            p = t.prompt_ids[-P:] if len(t.prompt_ids) > P else t.prompt_ids
            if p:
                prompts[i, P - len(p):] = torch.tensor(p)
                prompt_attn[i, P - len(p):] = 1
            if len(p) < len(t.prompt_ids):  # prompt_too_long rows: never trained on
                t.response_ids, t.response_mask, t.log_probs = [], [], []
            if t.env_error or t.needs_judge:  # the env failed or could not score: nothing of it is trained on
                t.response_mask = [0] * len(t.response_ids)
            L = len(t.response_ids)
            if L > R:
                raise RuntimeError(f"trajectory {t.item_id} has {L} response tokens > data.max_response_length={R}")
            if L:
                responses[i, :L] = torch.tensor(t.response_ids)
                resp_attn[i, :L] = 1
                response_mask[i, :L] = torch.tensor(t.response_mask)
                log_probs[i, :L] = torch.tensor(t.log_probs, dtype=torch.float32)
            model_pos = [j for j, m in enumerate(t.response_mask) if m]
            if model_pos:
                scores[i, model_pos[-1]] = float(t.reward)
        attention_mask = torch.cat([prompt_attn, resp_attn], dim=1)
        tensors = {
            "prompts": prompts,
            "responses": responses,
            "input_ids": torch.cat([prompts, responses], dim=1),
            "attention_mask": attention_mask,
            "position_ids": (attention_mask.cumsum(-1) - 1).clamp(min=0),
            "response_mask": response_mask,
            "rollout_log_probs": log_probs,
            "token_level_scores": scores,
        }
        non_tensors = {k: v for k, v in batch.non_tensor_batch.items()}  # pass through (uid, reward_model, ...)
        if "uid" not in non_tensors:  # no group ids given: samples of one item form a group
            non_tensors["uid"] = to_object_array([t.item_id for t in trajs])
        # a failed trajectory leaves its group: group baselines (GRPO, RLOO, ...) see real samples only
        rows = non_tensors.get("rollout_row", range(len(trajs)))
        non_tensors["uid"] = to_object_array([f"{uid}#env_error{row}" if t.env_error
                                              else f"{uid}{NEEDS_JUDGE_UID_SUFFIX}{row}" if t.needs_judge else uid
                                              for uid, row, t in zip(non_tensors["uid"], rows, trajs, strict=True)])
        non_tensors.update({
            "item_id": to_object_array([t.item_id for t in trajs]),
            "num_turns": to_object_array([t.num_turns for t in trajs]),
            "turn_rewards": to_object_array([list(t.turn_rewards) for t in trajs]),
            "invalid_actions": to_object_array([t.invalid_actions for t in trajs]),
            "reward": to_object_array([float(t.reward) for t in trajs]),
            "success": to_object_array([is_success(t.reward) for t in trajs]),
            "terminated": to_object_array([t.terminated for t in trajs]),
            "truncated": to_object_array([t.truncated for t in trajs]),
            "env_error": to_object_array([t.env_error for t in trajs]),
            "needs_judge": to_object_array([t.needs_judge for t in trajs]),
            "env_server": to_object_array([t.env_server for t in trajs]),
            "messages": to_object_array([t.messages for t in trajs]),
            "anchor_obs": to_object_array([list(t.anchor_obs) for t in trajs]),
            "turn_end_idx": to_object_array([list(t.turn_end_idx) for t in trajs]),
        })
        return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors, meta_info={})

    def _metrics(self, trajs: list[Trajectory], buckets: dict, wall: float, max_rounds: int) -> dict:
        n = max(len(trajs), 1)
        gen_tokens = sum(t.generated_tokens for t in trajs)
        env_any = buckets["env_only"] + buckets["both"]
        gen_any = buckets["gen_only"] + buckets["both"]
        return {
            "timing_s/rollout": wall,
            "timing_s/gen": gen_any,
            "timing_s/env": env_any,
            "timing_s/env_wait": buckets["env_only"],  # env in flight while the engine had nothing to do
            "rollout/env_wait_frac": buckets["env_only"] / wall if wall > 0 else 0.0,
            "rollout/env_call_s_sum": sum(t.env_s for t in trajs),
            "rollout/gen_call_s_sum": sum(t.gen_s for t in trajs),
            "rollout/trajectories_per_s": len(trajs) / wall if wall > 0 else 0.0,
            "rollout/gen_tokens_per_s": gen_tokens / wall if wall > 0 else 0.0,
            "rollout/generated_tokens": gen_tokens,
            "rollout/reward_mean": sum(t.reward for t in trajs) / n,
            "rollout/success_rate": sum(is_success(t.reward) for t in trajs) / n,
            "rollout/num_turns_mean": sum(t.num_turns for t in trajs) / n,
            "rollout/invalid_action_rate": (sum(t.invalid_actions for t in trajs)
                                            / max(sum(t.num_turns for t in trajs), 1)),
            "rollout/terminated_frac": sum(t.terminated for t in trajs) / n,
            "rollout/truncated_frac": sum(t.truncated for t in trajs) / n,
            "rollout/env_errors": sum(bool(t.env_error) for t in trajs),
            "rollout/needs_judge": sum(t.needs_judge for t in trajs),
            "rollout/response_len_mean": sum(len(t.response_ids) for t in trajs) / n,
            "rollout/max_rounds": max_rounds,
            **self._server_metrics(trajs),
        }

    def _server_metrics(self, trajs: list[Trajectory]) -> dict:
        """Per env server i (order of `agentgym.env_addr`): sessions, failures, up (in rotation now)."""
        servers = self.pool.servers.snapshot()
        out = env_server_metrics([t.env_server for t in trajs], [t.env_error for t in trajs],
                                 [s["addr"] for s in servers])
        out.update({f"rollout/env_server{i}/up": float(s["up"]) for i, s in enumerate(servers)})
        out["rollout/env_servers_up"] = float(sum(s["up"] for s in servers))
        return out

    def _report_errors(self, trajs: list[Trajectory]) -> None:
        failed = [t for t in trajs if t.env_error]
        self.total_trajectories += len(trajs)
        self.total_env_errors += len(failed)
        judged = sum(t.needs_judge for t in trajs)
        if judged:  # warn the first time; afterwards the count is in rollout/needs_judge and env/needs_judge
            level = logging.WARNING if not self.total_needs_judge else logging.INFO
            self.total_needs_judge += judged
            logger.log(level, "%d/%d trajectories need an LLM judge (%d since start) and are left out of the update "
                       "and of success rates; start the env server with --judge-base-url to score them", judged,
                       len(trajs), self.total_needs_judge)
        if not failed:
            return
        level = logging.ERROR if len(failed) == len(trajs) else logging.WARNING
        logger.log(level, "%d/%d trajectories failed in this rollout (%d/%d since start); first error: %s [%s]",
                   len(failed), len(trajs), self.total_env_errors, self.total_trajectories,
                   failed[0].env_error, failed[0].item_id)

    def _dump(self, trajs: list[Trajectory], global_step: int, validate: bool) -> None:
        if not self.log_dir:
            return
        os.makedirs(self.log_dir, exist_ok=True)
        path = os.path.join(self.log_dir, f"{'val_' if validate else ''}step{global_step}.jsonl")
        with open(path, "a", encoding="utf-8") as fh:
            for t in trajs:
                fh.write(json.dumps({
                    "item_id": t.item_id, "reward": t.reward, "success": is_success(t.reward), "turns": t.num_turns,
                    "turn_rewards": t.turn_rewards, "terminated": t.terminated, "truncated": t.truncated,
                    "env_error": t.env_error, "needs_judge": t.needs_judge, "gen_s": round(t.gen_s, 4),
                    "env_s": round(t.env_s, 4),
                    "messages": t.messages,
                }, ensure_ascii=False) + "\n")


def _close_resources(pool: EnvClientPool, executor: concurrent.futures.ThreadPoolExecutor) -> None:
    pool.close()
    executor.shutdown(wait=False, cancel_futures=True)


def _as_messages(chat) -> list[dict]:
    if isinstance(chat, str):
        return [{"role": "user", "content": chat}]
    return [{"role": str(m["role"]), "content": str(m["content"])} for m in list(chat)]


class TooManyEnvFailures(RuntimeError):
    """More trajectories of a training rollout failed than `agentgym.max_failed_frac` allows."""


def check_env_failures(rollout: DataProto, max_failed_frac: float, env_addr: str | list = "") -> int:
    """Raise `TooManyEnvFailures` when more than `max_failed_frac` of the rollout's trajectories (all
    ranks' rows) failed; return the number that failed."""
    errors = [str(e) for e in rollout.non_tensor_batch.get("env_error", []) if e]
    n = len(rollout)
    if n and len(errors) / n > max_failed_frac:
        addrs = [env_addr] if isinstance(env_addr, str) else list(env_addr)
        where = f" at {', '.join(a for a in addrs if a)}" if any(addrs) else ""
        raise TooManyEnvFailures(
            f"{len(errors)}/{n} trajectories failed in this rollout, more than "
            f"actor_rollout_ref.agentgym.max_failed_frac={max_failed_frac} allows; first error: {errors[0]}. "
            f"Check the env server(s){where} (or raise max_failed_frac to go on with fewer samples)")
    return len(errors)


def _seed(base: int, step: int, validate: int, row: int) -> int:
    """A request seed that depends only on (rollout.seed, step, mode, row), never on timing."""
    digest = hashlib.sha256(f"{base}/{step}/{validate}/{row}".encode()).digest()
    return int.from_bytes(digest[:6], "little") * 1000  # + turn index (< 1000 turns)


def _is_env_error(exc: BaseException) -> bool:
    """Errors that mean "the environment call failed" (end the trajectory, not the step)."""
    try:
        from agentenv.controller import EnvClientError
    except ImportError:  # pragma: no cover
        EnvClientError = ()  # type: ignore
    import requests

    from verl.utils.agentgym.client import EnvServerUnavailable

    # transport and server errors only: a KeyError or AssertionError is a bug and must surface
    return isinstance(exc, (EnvClientError, EnvServerUnavailable, requests.RequestException, TimeoutError,
                            ConnectionError))


def _progress(total: int, validate: bool):
    if not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="validate" if validate else "rollout", leave=False)


_ENGINE_COUNTERS = ("decode_steps", "generated_tokens", "busy_s", "prefill_tokens", "reused_tokens")


def _engine_counters(engine) -> dict | None:
    """The engine's decode counters (the HF engine keeps them in `stats`), or None for engines without them."""
    stats = getattr(engine, "stats", None)
    if not isinstance(stats, dict) or not all(k in stats for k in _ENGINE_COUNTERS):
        return None
    return {k: stats[k] for k in _ENGINE_COUNTERS}


def _engine_metrics(before: dict | None, after: dict | None, wall: float) -> dict:
    """How full and how fast the engine's decode steps were during one rollout: the mean rows per step (a
    small one means requests arrived too sparsely to batch), the mean step time (prefills included) and the
    share of the rollout's wall time the engine was generating at all; `prefix_reuse` is the share of the
    requests' context tokens whose KV came from earlier turns instead of a prefill."""
    if before is None or after is None:
        return {}
    d = {k: after[k] - before[k] for k in _ENGINE_COUNTERS}
    if d["decode_steps"] <= 0:
        return {}
    context = d["prefill_tokens"] + d["reused_tokens"]
    return {"rollout/engine_rows_per_step": d["generated_tokens"] / d["decode_steps"],
            "rollout/engine_step_ms": 1000.0 * d["busy_s"] / d["decode_steps"],
            "rollout/engine_busy_frac": d["busy_s"] / wall if wall > 0 else 0.0,
            "rollout/prefix_reuse": d["reused_tokens"] / context if context else 0.0}
