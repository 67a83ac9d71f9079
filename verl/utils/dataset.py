"""Training/validation data: AgentGym-RL item-id JSON files and verl parquet rows, plus a seeded,
resumable sampler and dataloader.

Owns reading rows and ordering them; it does not tokenize (the agent loop builds prompts from the
item id or the chat messages) and does not know about environments.

Row shapes (one dict per sample):
* item-id JSON (`AgentItemId/<task>_train.json`, `[{"item_id": "webshop_6"}, ...]`):
  `{"item_id": "webshop_6", "task_name": "webshop", "index": 6}` (read by `agentenv.item_ids`, the
  env/trainer contract; `parse_item_id` and `load_item_id_file` are re-exported here).
* parquet (verl): the row's columns; `prompt` (chat messages), `reward_model`
  (`{"ground_truth": ...}`), `data_source`, `extra_info`; `item_id` is taken from the row when
  present, else `"<data_source>_<row index>"`.
"""
from __future__ import annotations

import logging
import os
from typing import Any, Iterator, Sequence

import numpy as np

from agentenv.item_ids import load_item_id_file, parse_item_id, resolve_data_path
from verl.protocol import DataProto

__all__ = [
    "AgentDataset", "StatefulSampler", "StatefulDataLoader", "load_rows", "load_item_id_file",
    "parse_item_id", "rows_to_dataproto",
]

logger = logging.getLogger(__name__)


def _load_parquet(path: str, prompt_key: str) -> list[dict]:
    import pandas as pd

    frame = pd.read_parquet(path)
    key = prompt_key if prompt_key in frame.columns else "prompt"
    if key not in frame.columns and "item_id" not in frame.columns:
        raise ValueError(
            f"{path}: no column {prompt_key!r} (data.prompt_key) or 'prompt'; columns are {list(frame.columns)}"
        )
    rows = []
    for i, rec in enumerate(frame.to_dict(orient="records")):
        row = {k: _plain(v) for k, v in rec.items()}
        if key in row and key != "prompt":
            row["prompt"] = row.pop(key)
        if "item_id" not in row:  # verl's interaction rows name their task index; others their position
            session = ((row.get("extra_info") or {}).get("interaction_kwargs") or {}).get("session_id")
            row["item_id"] = (f"{row.get('data_source', os.path.splitext(os.path.basename(path))[0])}_"
                              f"{i if session is None else int(session)}")
        rows.append(row)
    return rows


def _plain(value: Any) -> Any:
    """Turn numpy containers from parquet into lists/dicts (chat messages arrive as arrays of dicts)."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def load_rows(paths: Sequence[str] | str, prompt_key: str = "item_id") -> list[dict]:
    """Load rows from item-id JSON (`.json`) and/or parquet (`.parquet`) files, in order; a relative path is
    looked up in the working directory, then among the shipped files (`agentenv.item_ids.resolve_data_path`).

    Raises:
        FileNotFoundError: naming the missing path.
        ValueError: for an unsupported extension.
    """
    paths = [paths] if isinstance(paths, str) else list(paths)
    rows: list[dict] = []
    for path in paths:
        path = resolve_data_path(path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"data file {path!r} does not exist (data.train_file / data.val_file), neither "
                                    f"under the working directory {os.getcwd()} nor as a shipped file")
        if path.endswith(".json"):
            rows.extend(load_item_id_file(path, prompt_key))
        elif path.endswith(".parquet"):
            rows.extend(_load_parquet(path, prompt_key))
        else:
            raise ValueError(f"data file {path!r}: unsupported format; use AgentGym-RL item-id .json or verl .parquet")
    return rows


class AgentDataset:
    """Rows from item-id JSON or parquet files (see module docstring).

    Args:
        paths: one path or a list.
        prompt_key: the id field (JSON) or chat-messages column (parquet).
        max_items: keep only the first `max_items` rows (None: all).
    """

    def __init__(self, paths: Sequence[str] | str, prompt_key: str = "item_id", max_items: int | None = None):
        self.rows = load_rows(paths, prompt_key)
        if max_items is not None:
            self.rows = self.rows[:max_items]
        if not self.rows:
            raise ValueError(f"data files {paths!r} contain no rows")

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, idx: int) -> dict:
        return self.rows[idx]


class StatefulSampler:
    """Seeded epoch permutation whose position can be saved and restored.

    Epoch e visits `permutation(seed + e)` (or 0..n-1 without shuffle), so a resumed run sees
    exactly the order an uninterrupted run would have seen.
    """

    def __init__(self, num_items: int, shuffle: bool = True, seed: int = 0):
        if num_items < 1:
            raise ValueError(f"StatefulSampler needs at least one item, got {num_items}")
        self.num_items, self.shuffle, self.seed = num_items, shuffle, seed
        self.epoch, self.position = 0, 0

    def order(self, epoch: int) -> np.ndarray:
        """The visiting order of `epoch`."""
        if not self.shuffle:
            return np.arange(self.num_items)
        return np.random.default_rng(self.seed + epoch).permutation(self.num_items)

    def next_indices(self, count: int, drop_last: bool = True) -> list[int] | None:
        """The next `count` indices of the current epoch, or None when the epoch is exhausted
        (the epoch then advances)."""
        remaining = self.num_items - self.position
        if remaining <= 0 or (drop_last and remaining < count):
            self.epoch, self.position = self.epoch + 1, 0
            return None
        take = min(count, remaining)
        idx = self.order(self.epoch)[self.position:self.position + take].tolist()
        self.position += take
        return idx

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "position": self.position, "seed": self.seed,
                "num_items": self.num_items, "shuffle": self.shuffle}

    def load_state_dict(self, state: dict) -> None:
        """Restore a position; refuses a state saved for a different dataset size or seed."""
        if state["num_items"] != self.num_items or state["seed"] != self.seed or state["shuffle"] != self.shuffle:
            raise ValueError(
                f"sampler state was saved for num_items={state['num_items']}, seed={state['seed']}, "
                f"shuffle={state['shuffle']} but this run has num_items={self.num_items}, seed={self.seed}, "
                f"shuffle={self.shuffle}; resume with the same data files and data.seed/data.shuffle")
        self.epoch, self.position = int(state["epoch"]), int(state["position"])


class StatefulDataLoader:
    """Batches of rows in sampler order; `state_dict()` captures the position for checkpoints.

    Iterating yields the remaining batches of the current epoch, then advances to the next epoch.
    """

    def __init__(self, dataset: AgentDataset, batch_size: int, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = True):
        if drop_last and batch_size > len(dataset):
            raise ValueError(f"data.train_batch_size={batch_size} exceeds the {len(dataset)} rows of the dataset; "
                             f"lower it or add item ids")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler = StatefulSampler(len(dataset), shuffle=shuffle, seed=seed)

    def __len__(self) -> int:
        """Batches per epoch."""
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[list[dict]]:
        while True:
            idx = self.sampler.next_indices(self.batch_size, self.drop_last)
            if idx is None:
                return
            yield [self.dataset[i] for i in idx]

    @property
    def epoch(self) -> int:
        return self.sampler.epoch

    def state_dict(self) -> dict:
        return {"sampler": self.sampler.state_dict(), "batch_size": self.batch_size}

    def load_state_dict(self, state: dict) -> None:
        self.sampler.load_state_dict(state["sampler"])


def rows_to_dataproto(rows: Sequence[dict], meta_info: dict | None = None) -> DataProto:
    """Pack rows into a DataProto with only `non_tensor_batch` (one object array per row key)."""
    keys: list[str] = []
    for row in rows:
        keys.extend(k for k in row if k not in keys)
    from verl.protocol import to_object_array

    non_tensors = {k: to_object_array([row.get(k) for row in rows]) for k in keys}
    return DataProto.from_dict(non_tensors=non_tensors, meta_info=meta_info or {})
