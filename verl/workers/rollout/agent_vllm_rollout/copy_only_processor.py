"""vLLM side of copy-only ids that span several tokens (`copy_only.SequenceCopyOnlyRule`): a vLLM V1 logits
processor, built by vLLM in its engine process, that bans per request and per step what the rule bans.

A request opts in with `SamplingParams.extra_args = {"copy_only_tokens": <pattern>}`; its prompt is the turn's
context (so the shown ids come from `prompt_tok_ids`) and its output so far is the turn. It runs before vLLM's
processed log-probs, so the engine's log-probs are those of the ruled policy, as in the HF engine and the
actor. Imported only where vLLM is installed (`VLLMEngine` names it by its qualified name).
"""
from __future__ import annotations

import torch
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor
from vllm.v1.sample.logits_processor.builtin import process_dict_updates

from verl.workers.copy_only import SequenceCopyOnlyRule, TurnRule

__all__ = ["CopyOnlyLogitsProcessor", "EXTRA_ARGS_KEY", "QUALNAME"]

EXTRA_ARGS_KEY = "copy_only_tokens"
QUALNAME = f"{__name__}:CopyOnlyLogitsProcessor"


class CopyOnlyLogitsProcessor(LogitsProcessor):
    """Per-step bans of `SequenceCopyOnlyRule` for the requests that carry a pattern in `extra_args`."""

    def __init__(self, vllm_config, device: torch.device, is_pin_memory: bool):
        self.tokenizer_path = vllm_config.model_config.tokenizer
        self.rules: dict[str, SequenceCopyOnlyRule] = {}
        self.rows: dict[int, tuple[TurnRule, list[int]]] = {}  # batch index -> (turn rule, output ids so far)

    def _rule(self, pattern: str) -> SequenceCopyOnlyRule:
        if pattern not in self.rules:
            from transformers import AutoTokenizer

            self.rules[pattern] = SequenceCopyOnlyRule(AutoTokenizer.from_pretrained(self.tokenizer_path), pattern)
        return self.rules[pattern]

    def _new_state(self, params, prompt_ids, output_ids):
        pattern = (params.extra_args or {}).get(EXTRA_ARGS_KEY)
        if not pattern:
            return None
        return self._rule(pattern).turn_rule(prompt_ids or []), output_ids

    def is_argmax_invariant(self) -> bool:
        return False

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        process_dict_updates(self.rows, batch_update, self._new_state)

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        for index, (rule, output_ids) in self.rows.items():
            ban = rule.ban_mask(output_ids, logits.shape[-1]).to(logits.device)
            logits[index].masked_fill_(ban, float("-inf"))
        return logits
