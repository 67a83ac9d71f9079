"""Stop rules: end a turn where the env's action parser ends the action, so nothing after it is generated.

An env client declares where its action ends as `action_end = (trigger, end)`: the turn ends at the
first `end` after the first `trigger` (WebShop's ReAct: the "]" after "Action:"; WebArena: the
closing ``` after the opening one). The agent loop builds one `ActionEnd` per request
(`ActionEndRule.for_request`) and hands it to the engine in `SamplingParams.stop_rule`; the engine
feeds it every sampled id and ends the request with finish_reason "stop" on the id that completes
`end` (that id is kept: the cut is at token granularity, like vLLM's stop strings).

Ids become text through a per-id table filled on first use (`tokenizer.decode([id])`), so a step
costs a dict lookup and a substring test on the short text since the trigger.
"""
from __future__ import annotations

__all__ = ["ActionEnd", "ActionEndRule"]


class ActionEndRule:
    """The (trigger, end) pair of an env and the tokenizer's id -> text table, shared by its requests."""

    def __init__(self, tokenizer, trigger: str, end: str):
        if not end:
            raise ValueError("an action-end stop rule needs a non-empty end string")
        self.tokenizer, self.trigger, self.end = tokenizer, trigger, end
        self._texts: dict[int, str] = {}

    def text(self, token_id: int) -> str:
        """The text of one id (memoised)."""
        piece = self._texts.get(token_id)
        if piece is None:
            piece = self._texts[token_id] = self.tokenizer.decode([token_id], skip_special_tokens=True)
        return piece

    def for_request(self) -> "ActionEnd":
        """A fresh matcher for one generation request."""
        return ActionEnd(self)


class ActionEnd:
    """Per-request state of an `ActionEndRule`: `feed(id)` is True on the id that ends the action."""

    def __init__(self, rule: ActionEndRule):
        self.rule = rule
        self._text = ""
        self._armed = not rule.trigger  # no trigger: the first `end` stops

    def feed(self, token_id: int) -> bool:
        """Take the next sampled id; True when the text so far completes the action's end."""
        rule = self.rule
        self._text += rule.text(token_id)
        if not self._armed:
            at = self._text.find(rule.trigger)
            if at < 0:
                self._text = self._text[-len(rule.trigger):]  # keep only what a split trigger may need
                return False
            self._armed = True
            self._text = self._text[at + len(rule.trigger):]
        return rule.end in self._text
