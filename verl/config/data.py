"""`data`: where the prompts (item ids or parquet rows) come from and how long sequences may be."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Optional

from verl.config.loader import check_positive

__all__ = ["DataConfig"]


@dataclass(frozen=True)
class DataConfig:
    """`data`: where prompts come from and how long sequences may be."""

    compat_keys: ClassVar[dict[str, str]] = {"return_raw_chat": "chats are always kept raw"}

    train_file: Optional[str] = "AgentItemId/webshop_train.json"
    val_file: Optional[str] = "AgentItemId/webshop_test.json"
    train_files: Any = None   # verl spelling (str or list of str); wins over train_file when set
    val_files: Any = None
    # training goals the learning report evaluates too (its "trained" section, the first val_max_items); null:
    # held-out goals only; not read without the report (trainer.learning_report=False)
    trained_val_file: Optional[str] = None
    # untrained goals of the same pool, drawn by the same rule (its "control" section); null: none
    control_val_file: Optional[str] = None
    # expert demonstrations on held-out goals whose log-likelihood the learning report measures before and after
    # (its "expert_probe"; `verl.agent_trainer.expert_probe`); null: no probe
    expert_probe_file: Optional[str] = None
    prompt_key: str = "item_id"
    reward_fn_key: str = "data_source"
    max_prompt_length: int = 2048
    max_response_length: int = 2048
    train_batch_size: int = 1024
    val_batch_size: Optional[int] = None
    val_max_items: Optional[int] = None
    return_raw_chat: bool = True
    shuffle: bool = True
    seed: int = 1

    def __post_init__(self):
        for key in ("max_prompt_length", "max_response_length", "train_batch_size"):
            check_positive(f"data.{key}", getattr(self, key))
        check_positive("data.val_batch_size", self.val_batch_size)
        check_positive("data.val_max_items", self.val_max_items)
        if self.train_files is None and not self.train_file:
            raise ValueError("data.train_file is empty; set data.train_file=AgentItemId/<task>_train.json "
                             "(or data.train_files=<parquet>)")

    @property
    def train_paths(self) -> list[str]:
        """Training files, preferring verl's `train_files` spelling when set."""
        return _as_paths(self.train_files if self.train_files is not None else self.train_file)

    @property
    def goal_set_files(self) -> dict[str, str]:
        """{"trained" | "control": item-id file} of the goal sets the learning report evaluates beside held-out."""
        files = {"trained": self.trained_val_file, "control": self.control_val_file}
        return {name: path for name, path in files.items() if path}

    @property
    def val_paths(self) -> list[str]:
        """Validation files (empty: no validation set)."""
        return _as_paths(self.val_files if self.val_files is not None else self.val_file)


def _as_paths(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]
