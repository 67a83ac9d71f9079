"""A rule-based WebShop "model" behind the engine interface, for tests and benchmarks (not part of the
trainer: import it as `scripted_engine` with tests/ on the path, as tests/conftest.py and
bench/rollout.py do).

`ScriptedWebshopEngine` reads the last observation in the prompt and answers with a ReAct action
as token ids ending with EOS: search the first words of the goal, click the first product, buy.
With `inner` (a real engine), it first runs the real generation for the same request, so compute
cost and batching are realistic while the env still receives valid actions (a random tiny model
almost never writes one, and the WebShop client answers unparseable text without calling the
server). Not a training engine: its log-probs are placeholders.
"""
from __future__ import annotations

import re
import threading

from verl.workers.rollout.base import GenerationOutput, RolloutEngine, SamplingParams

__all__ = ["ScriptedWebshopEngine", "webshop_rule_action"]

_ASIN = re.compile(r"\[SEP\] (B[0-9A-Z]{9}) \[SEP\]")


def webshop_rule_action(observation: str) -> str:
    """search[first goal words] on the search page, click[buy now] on an item page, else the first product."""
    if "[SEP] Search" in observation and "Back to Search" not in observation:
        goal = observation.split("Instruction: [SEP] ", 1)[-1].split(" [SEP]", 1)[0]
        return f"search[{' '.join(goal.split()[:6])}]"
    if "Buy Now" in observation:
        return "click[buy now]"
    asins = _ASIN.findall(observation)
    return f"click[{asins[0].lower()}]" if asins else "click[back to search]"


class ScriptedWebshopEngine(RolloutEngine):
    """Rule-based ReAct shopper over a ChatML tokenizer.

    Args:
        tokenizer: the tokenizer whose chat template built the prompt (ChatML user turns).
        inner: optional real engine run first on every request (its output is discarded).
        on_call: optional callback `(call_number)` invoked before each request (tests use it to
            inject failures at a known point).
    """

    def __init__(self, tokenizer, inner: RolloutEngine | None = None, on_call=None):
        self.tok = tokenizer
        self.inner = inner
        self.on_call = on_call
        self.calls = 0
        self._lock = threading.Lock()

    async def _generate_ids(self, prompt_ids: list[int], sampling: SamplingParams) -> GenerationOutput:
        with self._lock:
            self.calls += 1
            n = self.calls
        if self.on_call:
            self.on_call(n)
        inner_tokens = 0
        if self.inner is not None:
            inner_tokens = len((await self.inner.generate(prompt_ids, sampling)).token_ids)
        observation = self.tok.decode(prompt_ids).rsplit("<|im_start|>user\n", 1)[-1]
        text = f"Thought:\nI think so.\n\nAction:\n{webshop_rule_action(observation)}"
        ids = self.tok.encode(text, add_special_tokens=False)[: sampling.max_tokens - 1] + [self.tok.eos_token_id]
        return GenerationOutput(token_ids=ids, log_probs=[0.0] * len(ids), finish_reason="stop",
                                extra={"inner_tokens": inner_tokens})

    def update_weights(self, named_tensors) -> None:
        if self.inner is not None:
            self.inner.update_weights(named_tensors)

    def shutdown(self) -> None:
        if self.inner is not None:
            self.inner.shutdown()
