"""DataProto: the one batch type that flows between trainer stages.

A ``DataProto`` holds three things that share the sample dimension (dim 0, length B):

* ``batch``: a :class:`tensordict.TensorDict` of tensors (``batch_size=[B]``), or ``None``;
* ``non_tensor_batch``: ``dict[str, np.ndarray]`` (object arrays, first dim B);
* ``meta_info``: a plain ``dict`` of per-batch values (timings, ``global_step``, ...).

It owns the batch container and its verbs (select, slice, chunk/split, concat, repeat, union,
pop, to(device), save/load, padding); it does not know what any key means. The keys below are the
contract between the rollout, the trainer and the workers; ``B`` = prompts x rollout.n,
``P`` = ``data.max_prompt_length``, ``R`` = ``data.max_response_length``.

========================  ==========  =======  ======================================================
key                       where       shape    meaning
========================  ==========  =======  ======================================================
prompts                   batch       (B, P)   int64, LEFT-padded prompt ids
responses                 batch       (B, R)   int64, RIGHT-padded; model turns AND env observations
input_ids                 batch       (B, P+R) int64, cat(prompts, responses)
attention_mask            batch       (B, P+R) 1 on real tokens
position_ids              batch       (B, P+R) clamp(cumsum(attention_mask) - 1, min=0)
response_mask             batch       (B, R)   1 ONLY on tokens the model sampled (incl. its EOT token)
rollout_log_probs         batch       (B, R)   float32 engine log-probs on model tokens, 0 elsewhere
token_level_scores        batch       (B, R)   float32 final reward on the LAST response_mask==1 token
rm_scores                 batch       (B, R)   float32 reward-model score on the LAST model token (reward_model.enable)
old_log_probs             batch       (B, R)   actor log-probs before the update (trainer)
ref_log_prob              batch       (B, R)   reference-policy log-probs (trainer)
values                    batch       (B, R)   critic values (trainer)
token_level_rewards       batch       (B, R)   scores minus optional KL penalty (trainer)
advantages                batch       (B, R)   estimator output (trainer)
returns                   batch       (B, R)   estimator output (trainer)
entropys                  batch       (B, R)   per-token entropy (trainer)
uid                       non-tensor  (B,)     one id per prompt, shared by its n samples
item_id                   non-tensor  (B,)     str, environment item id
num_turns                 non-tensor  (B,)     int, agent turns taken
turn_rewards              non-tensor  (B,)     list[float] per-turn env rewards
reward                    non-tensor  (B,)     float, the env / rule score (a reward model never changes it)
success                   non-tensor  (B,)     bool, reward == 1
terminated                non-tensor  (B,)     bool, env said done
truncated                 non-tensor  (B,)     bool, round/token limit cut the episode
env_error                 non-tensor  (B,)     str, "" if none
needs_judge               non-tensor  (B,)     bool, the env could not score it without an LLM judge (not trained on)
env_server                non-tensor  (B,)     str, address of the env server the row ran on ("" if none)
messages                  non-tensor  (B,)     list of chat dicts
anchor_obs                non-tensor  (B,)     list[hashable] per-turn anchor observations (GiGPO)
timing_s/gen, ...         meta_info   -        rollout timings and metrics
max_rounds, global_step   meta_info   -        inputs to the rollout (rounds_ctrl), step counter
validate                  meta_info   -        bool, validation rollout
metrics                   meta_info   -        dict returned by update_actor / update_critic
========================  ==========  =======  ======================================================
"""
from __future__ import annotations

import copy
import logging
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional, Sequence

import numpy as np
import torch
from tensordict import TensorDict

logger = logging.getLogger(__name__)

__all__ = [
    "DataProto",
    "DataProtoItem",
    "pad_dataproto_to_divisor",
    "unpad_dataproto",
    "union_two_dict",
    "union_tensor_dict",
    "union_numpy_dict",
    "list_of_dict_to_dict_of_list",
    "to_object_array",
]


def to_object_array(values: Iterable[Any]) -> np.ndarray:
    """Build a 1-D numpy object array, one element per item.

    ``np.array(list_of_lists, dtype=object)`` would build a 2-D array when the inner lists have
    equal length (e.g. ``turn_rewards``); this keeps each item as one Python object.
    """
    values = list(values)
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _as_numpy(value: Any, key: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple)):
        return to_object_array(value)
    raise TypeError(
        f"non_tensor_batch[{key!r}] must be a numpy array or a list, got {type(value).__name__}"
    )


def _values_equal(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and bool(torch.equal(a.cpu(), b.cpu()))
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.shape != b.shape:
            return False
        if a.dtype == object or b.dtype == object:
            return all(_values_equal(x, y) for x, y in zip(a.ravel(), b.ravel(), strict=True))
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    try:
        eq = a == b
        return bool(eq) if not isinstance(eq, np.ndarray) else bool(eq.all())
    except Exception:  # incomparable objects are different
        return False


def union_two_dict(dict1: dict, dict2: dict) -> dict:
    """Merge ``dict2`` into ``dict1`` (in place); a key present in both must hold equal values.

    Raises:
        ValueError: naming the key when both dicts hold different values under it.
    """
    for key, val in dict2.items():
        if key in dict1 and not _values_equal(dict1[key], val):
            raise ValueError(f"union: key {key!r} holds different values in the two dicts ({dict1[key]!r} vs {val!r})")
        dict1[key] = val
    return dict1


def union_tensor_dict(td1: TensorDict, td2: TensorDict) -> TensorDict:
    """Add ``td2``'s tensors to ``td1`` (in place); shared keys must hold equal tensors."""
    if td1.batch_size != td2.batch_size:
        raise ValueError(f"union: batch sizes differ: {tuple(td1.batch_size)} vs {tuple(td2.batch_size)}")
    for key in td2.keys():
        if key in td1.keys():
            if not _values_equal(td1[key], td2[key]):
                raise ValueError(f"union: batch[{key!r}] differs between the two DataProtos")
        else:
            td1[key] = td2[key]
    return td1


def union_numpy_dict(d1: dict, d2: dict) -> dict:
    """Add ``d2``'s arrays to ``d1`` (in place); shared keys must hold equal arrays."""
    for key, val in d2.items():
        if key in d1 and not _values_equal(d1[key], val):
            raise ValueError(f"union: non_tensor_batch[{key!r}] differs between the two DataProtos")
        d1[key] = val
    return d1


def list_of_dict_to_dict_of_list(list_of_dict: Sequence[dict]) -> dict:
    """[{k: v1}, {k: v2}] -> {k: [v1, v2]}; every dict must have the same keys."""
    if not list_of_dict:
        return {}
    keys = list(list_of_dict[0].keys())
    out = {k: [] for k in keys}
    for i, d in enumerate(list_of_dict):
        if set(d.keys()) != set(keys):
            raise ValueError(f"item {i} has keys {sorted(d)}, expected {sorted(keys)}")
        for k in keys:
            out[k].append(d[k])
    return out


def _require_keys(kind: str, keys: Iterable, have: Sequence) -> None:
    missing = [k for k in keys if k not in have]
    if missing:
        raise KeyError(f"select: {kind} keys {missing} not present; have {sorted(have)}")


def _pick(kind: str, mapping: dict, keys) -> dict:
    """A shallow copy of `mapping`, only `keys` of it unless None (KeyError names missing keys)."""
    if keys is None:
        return dict(mapping)
    _require_keys(kind, keys, list(mapping))
    return {k: mapping[k] for k in keys}


@dataclass
class DataProtoItem:
    """One sample of a DataProto (``data[i]`` for an int ``i``)."""

    batch: Optional[TensorDict] = None
    non_tensor_batch: dict = field(default_factory=dict)
    meta_info: dict = field(default_factory=dict)


@dataclass
class DataProto:
    """A batch of B samples: tensors, numpy object arrays and batch-level meta info.

    Construct with :meth:`from_dict` or :meth:`from_single_dict`. Every verb returns a new
    DataProto that shares tensor storage unless said otherwise; ``meta_info`` is shallow-copied.
    """

    batch: Optional[TensorDict] = None
    non_tensor_batch: dict = field(default_factory=dict)
    meta_info: dict = field(default_factory=dict)

    def __post_init__(self):
        self.non_tensor_batch = {k: _as_numpy(v, k) for k, v in (self.non_tensor_batch or {}).items()}
        self.meta_info = self.meta_info if self.meta_info is not None else {}
        self.check_consistency()

    # ------------------------------------------------------------------ construction / checks
    @classmethod
    def from_dict(
        cls,
        tensors: Optional[dict] = None,
        non_tensors: Optional[dict] = None,
        meta_info: Optional[dict] = None,
        num_batch_dims: int = 1,
    ) -> "DataProto":
        """Build from ``{name: tensor}``, ``{name: array|list}`` and a meta dict.

        Raises:
            ValueError: if tensors disagree on their first ``num_batch_dims`` dims, naming the key.
        """
        if num_batch_dims != 1:
            raise ValueError(f"num_batch_dims={num_batch_dims} is not supported; DataProto uses 1 batch dim")
        tensors = dict(tensors or {})
        batch = None
        if tensors:
            first_key = next(iter(tensors))
            batch_size = None
            for key, t in tensors.items():
                if not isinstance(t, torch.Tensor):
                    raise TypeError(f"tensors[{key!r}] must be a torch.Tensor, got {type(t).__name__}")
                if t.dim() < 1:
                    raise ValueError(f"tensors[{key!r}] is a scalar; batch tensors need a batch dim")
                if batch_size is None:
                    batch_size = t.shape[0]
                elif t.shape[0] != batch_size:
                    raise ValueError(
                        f"batch size mismatch: tensors[{key!r}] has {t.shape[0]} rows but "
                        f"tensors[{first_key!r}] has {batch_size}"
                    )
            batch = TensorDict(tensors, batch_size=[batch_size])
        return cls(batch=batch, non_tensor_batch=dict(non_tensors or {}), meta_info=dict(meta_info or {}))

    @classmethod
    def from_single_dict(cls, data: dict, meta_info: Optional[dict] = None) -> "DataProto":
        """Build from one dict, sending tensors to ``batch`` and arrays/lists to ``non_tensor_batch``."""
        tensors, non_tensors = {}, {}
        for key, val in data.items():
            if isinstance(val, torch.Tensor):
                tensors[key] = val
            elif isinstance(val, (np.ndarray, list, tuple)):
                non_tensors[key] = val
            else:
                raise TypeError(
                    f"data[{key!r}] has unsupported type {type(val).__name__}; use a tensor, ndarray or list"
                )
        return cls.from_dict(tensors=tensors, non_tensors=non_tensors, meta_info=meta_info)

    def check_consistency(self) -> None:
        """Check every tensor and non-tensor array has the same length along dim 0.

        Raises:
            ValueError: naming the offending key and both sizes.
        """
        if self.batch is not None:
            if not isinstance(self.batch, TensorDict):
                raise TypeError(f"DataProto.batch must be a TensorDict or None, got {type(self.batch).__name__}")
            if len(self.batch.batch_size) != 1:
                raise ValueError(
                    f"DataProto.batch must have exactly 1 batch dim, got batch_size={tuple(self.batch.batch_size)}"
                )
        ref_key, ref_len = None, None
        if self.batch is not None:
            ref_key, ref_len = "batch", int(self.batch.batch_size[0])
        for key, val in self.non_tensor_batch.items():
            if not isinstance(val, np.ndarray):
                raise TypeError(f"non_tensor_batch[{key!r}] must be a numpy array, got {type(val).__name__}")
            if val.ndim < 1:
                raise ValueError(f"non_tensor_batch[{key!r}] is 0-d; it needs one entry per sample")
            if ref_len is None:
                ref_key, ref_len = f"non_tensor_batch[{key!r}]", len(val)
            elif len(val) != ref_len:
                raise ValueError(
                    f"length mismatch: non_tensor_batch[{key!r}] has {len(val)} entries but {ref_key} has {ref_len}"
                )

    def __len__(self) -> int:
        if self.batch is not None:
            return int(self.batch.batch_size[0])
        for val in self.non_tensor_batch.values():
            return len(val)
        return 0

    def __repr__(self) -> str:
        keys = list(self.batch.keys()) if self.batch is not None else []
        return (f"DataProto(len={len(self)}, batch={keys}, non_tensor_batch={list(self.non_tensor_batch)}, "
                f"meta_info={list(self.meta_info)})")

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, item):
        """``int`` -> DataProtoItem; ``slice`` -> DataProto view; index list/array/tensor -> select_idxs."""
        if isinstance(item, slice):
            return self.slice(item.start, item.stop, item.step)
        if isinstance(item, (int, np.integer)):
            n = len(self)
            if not -n <= item < n:
                raise IndexError(f"index {item} out of range for DataProto of length {n}")
            batch = self.batch[int(item)] if self.batch is not None else None
            non_tensor = {k: v[int(item)] for k, v in self.non_tensor_batch.items()}
            return DataProtoItem(batch=batch, non_tensor_batch=non_tensor, meta_info=self.meta_info)
        if isinstance(item, (list, np.ndarray, torch.Tensor)):
            return self.select_idxs(item)
        raise TypeError(f"DataProto indices must be int, slice, list, ndarray or tensor, got {type(item).__name__}")

    def slice(self, start: Optional[int] = None, end: Optional[int] = None, step: Optional[int] = None) -> "DataProto":
        """Rows ``start:end:step`` (tensors are views)."""
        s = slice(start, end, step)
        batch = self.batch[s] if self.batch is not None else None
        non_tensor = {k: v[s] for k, v in self.non_tensor_batch.items()}
        return DataProto(batch=batch, non_tensor_batch=non_tensor, meta_info=dict(self.meta_info))

    def select_idxs(self, idxs) -> "DataProto":
        """Rows by integer indices or a boolean mask (list, ndarray or tensor)."""
        if isinstance(idxs, list):
            idxs = np.asarray(idxs)
            if idxs.dtype != bool:
                idxs = idxs.astype(np.int64)
        if isinstance(idxs, torch.Tensor):
            idxs_np = idxs.detach().cpu().numpy()
        else:
            idxs_np = np.asarray(idxs)
        if idxs_np.dtype == bool:
            if idxs_np.shape != (len(self),):
                raise ValueError(f"boolean index has shape {idxs_np.shape}, expected ({len(self)},)")
            idxs_np = np.nonzero(idxs_np)[0]
        idxs_np = idxs_np.astype(np.int64).reshape(-1)
        idxs_t = torch.from_numpy(idxs_np)
        batch = None
        if self.batch is not None:
            batch = TensorDict({k: v[idxs_t.to(v.device)] for k, v in self.batch.items()},
                               batch_size=[len(idxs_np)], device=self.batch.device)
        non_tensor = {k: v[idxs_np] for k, v in self.non_tensor_batch.items()}
        return DataProto(batch=batch, non_tensor_batch=non_tensor, meta_info=dict(self.meta_info))

    # ------------------------------------------------------------------ key-level verbs
    def select(
        self, batch_keys=None, non_tensor_batch_keys=None, meta_info_keys=None, deepcopy: bool = False
    ) -> "DataProto":
        """A DataProto with only the named keys (``None`` keeps all of that kind).

        Raises:
            KeyError: naming a requested key that is missing and the keys present.
        """
        batch = self.batch
        if batch_keys is not None:
            _require_keys("batch", batch_keys, self._batch_keys())
            batch = self.batch.select(*batch_keys) if batch_keys else None
        non_tensor = _pick("non_tensor_batch", self.non_tensor_batch, non_tensor_batch_keys)
        meta = _pick("meta_info", self.meta_info, meta_info_keys)
        if deepcopy:
            batch = batch.clone() if batch is not None else None
            non_tensor = copy.deepcopy(non_tensor)
            meta = copy.deepcopy(meta)
        return DataProto(batch=batch, non_tensor_batch=non_tensor, meta_info=meta)

    def pop(self, batch_keys=None, non_tensor_batch_keys=None, meta_info_keys=None) -> "DataProto":
        """Remove the named keys from ``self`` and return them as a new DataProto.

        Raises:
            KeyError: naming a requested key that is missing.
        """
        batch_keys = list(batch_keys or [])
        non_tensor_batch_keys = list(non_tensor_batch_keys or [])
        meta_info_keys = list(meta_info_keys or [])
        selected = self.select(batch_keys, non_tensor_batch_keys, meta_info_keys)
        for k in batch_keys:
            del self.batch[k]
        for k in non_tensor_batch_keys:
            del self.non_tensor_batch[k]
        for k in meta_info_keys:
            del self.meta_info[k]
        return selected

    def rename(self, old_keys, new_keys) -> "DataProto":
        """Rename batch keys in place (``str`` or lists of equal length); returns self."""
        old_keys = [old_keys] if isinstance(old_keys, str) else list(old_keys)
        new_keys = [new_keys] if isinstance(new_keys, str) else list(new_keys)
        if len(old_keys) != len(new_keys):
            raise ValueError(f"rename: {len(old_keys)} old keys but {len(new_keys)} new keys")
        for old, new in zip(old_keys, new_keys, strict=True):
            if self.batch is None or old not in self.batch.keys():
                raise KeyError(f"rename: batch key {old!r} not present; have {self._batch_keys()}")
            self.batch[new] = self.batch.pop(old)
        return self

    def union(self, other: "DataProto") -> "DataProto":
        """Add ``other``'s keys to ``self`` (in place) and return self.

        Raises:
            ValueError: if lengths differ, or a key present in both holds different values (names the key).
        """
        self_empty = self.batch is None and not self.non_tensor_batch
        other_empty = other.batch is None and not other.non_tensor_batch
        if not self_empty and not other_empty and len(self) != len(other):
            raise ValueError(f"union: lengths differ: {len(self)} vs {len(other)}")
        if other.batch is not None:
            if self.batch is None:
                self.batch = other.batch
            else:
                self.batch = union_tensor_dict(self.batch, other.batch)
        self.non_tensor_batch = union_numpy_dict(self.non_tensor_batch, other.non_tensor_batch)
        self.meta_info = union_two_dict(self.meta_info, other.meta_info)
        self.check_consistency()
        return self

    # ------------------------------------------------------------------ batch-level verbs
    def chunk(self, chunks: int) -> list["DataProto"]:
        """Split into ``chunks`` equal parts (``len(self)`` must be divisible; see pad_dataproto_to_divisor).

        Raises:
            ValueError: if the length is not divisible by ``chunks``.
        """
        n = len(self)
        if chunks < 1 or n % chunks != 0:
            raise ValueError(
                f"chunk: length {n} is not divisible by chunks={chunks}; pad with pad_dataproto_to_divisor first"
            )
        return self.split(n // chunks)

    def split(self, split_size: int) -> list["DataProto"]:
        """Consecutive parts of ``split_size`` rows (the last may be shorter)."""
        if split_size < 1:
            raise ValueError(f"split: split_size must be >= 1, got {split_size}")
        return [self.slice(i, i + split_size) for i in range(0, len(self), split_size)]

    @staticmethod
    def concat(data: list["DataProto"]) -> "DataProto":
        """Concatenate along dim 0.

        ``meta_info`` is the union of the items' meta_info; where items disagree on a key (e.g.
        per-chunk timings) the first item's value wins.
        """
        if not data:
            raise ValueError("concat: got an empty list")
        batch = None
        if data[0].batch is not None:
            keys = set(data[0].batch.keys())
            for i, d in enumerate(data):
                if d.batch is None or set(d.batch.keys()) != keys:
                    have = sorted(d.batch.keys()) if d.batch is not None else []
                    raise ValueError(f"concat: item {i} has batch keys {have}, expected {sorted(keys)}")
            batch = torch.cat([d.batch for d in data], dim=0)
        non_tensor = {}
        for key in data[0].non_tensor_batch:
            missing = [i for i, d in enumerate(data) if key not in d.non_tensor_batch]
            if missing:
                raise ValueError(f"concat: non_tensor_batch[{key!r}] missing in items {missing}")
            non_tensor[key] = np.concatenate([d.non_tensor_batch[key] for d in data], axis=0)
        meta = {}
        for d in data:
            for k, v in d.meta_info.items():
                meta.setdefault(k, v)
        return DataProto(batch=batch, non_tensor_batch=non_tensor, meta_info=meta)

    def repeat(self, repeat_times: int = 2, interleave: bool = True) -> "DataProto":
        """Repeat every row ``repeat_times`` times.

        ``interleave=True`` gives a a b b (each prompt's n samples adjacent, as GRPO groups expect);
        ``False`` gives a b a b.
        """
        if repeat_times < 1:
            raise ValueError(f"repeat: repeat_times must be >= 1, got {repeat_times}")
        n = len(self)
        if interleave:
            idx = np.repeat(np.arange(n), repeat_times)
        else:
            idx = np.tile(np.arange(n), repeat_times)
        return self.select_idxs(idx)

    def to(self, device) -> "DataProto":
        """Move the tensor batch to ``device`` (in place) and return self."""
        if self.batch is not None:
            self.batch = self.batch.to(device)
        return self

    def copy(self) -> "DataProto":
        """A deep copy."""
        return self.select(deepcopy=True)

    # ------------------------------------------------------------------ persistence
    def save_to_disk(self, filepath: str) -> None:
        """Write to ``filepath`` (torch.save of plain tensors, arrays and meta; parents created)."""
        os.makedirs(os.path.dirname(os.path.abspath(filepath)), exist_ok=True)
        payload = {
            "batch": {k: v.cpu() for k, v in self.batch.items()} if self.batch is not None else None,
            "non_tensor_batch": self.non_tensor_batch,
            "meta_info": self.meta_info,
        }
        torch.save(payload, filepath)

    @staticmethod
    def load_from_disk(filepath: str) -> "DataProto":
        """Read a file written by :meth:`save_to_disk` (trusted files only: it unpickles)."""
        payload = torch.load(filepath, weights_only=False)
        return DataProto.from_dict(tensors=payload["batch"], non_tensors=payload["non_tensor_batch"],
                                   meta_info=payload["meta_info"])

    # ------------------------------------------------------------------ iteration
    def make_iterator(self, mini_batch_size: int, epochs: int, seed: Optional[int] = None,
                      shuffle: bool = True) -> Iterator["DataProto"]:
        """Yield mini-batches of ``mini_batch_size`` rows for ``epochs`` passes (reshuffled per epoch).

        Raises:
            ValueError: if the length is not divisible by ``mini_batch_size``.
        """
        n = len(self)
        if mini_batch_size < 1 or n % mini_batch_size != 0:
            raise ValueError(f"make_iterator: length {n} is not divisible by mini_batch_size={mini_batch_size}")
        gen = torch.Generator()
        if seed is not None:
            gen.manual_seed(seed)
        for _ in range(epochs):
            order = torch.randperm(n, generator=gen) if shuffle else torch.arange(n)
            for i in range(0, n, mini_batch_size):
                yield self.select_idxs(order[i:i + mini_batch_size])

    def _batch_keys(self) -> list:
        return sorted(self.batch.keys()) if self.batch is not None else []


def pad_dataproto_to_divisor(data: DataProto, size_divisor: int) -> tuple[DataProto, int]:
    """Pad by repeating leading rows until ``len(data) % size_divisor == 0``.

    Returns:
        (padded DataProto, pad_size); undo with :func:`unpad_dataproto`.
    """
    if size_divisor < 1:
        raise ValueError(f"size_divisor must be >= 1, got {size_divisor}")
    n = len(data)
    pad_size = (-n) % size_divisor
    if pad_size == 0:
        return data, 0
    if n == 0:
        raise ValueError("cannot pad an empty DataProto")
    idx = np.arange(pad_size) % n
    return DataProto.concat([data, data.select_idxs(idx)]), pad_size


def unpad_dataproto(data: DataProto, pad_size: int) -> DataProto:
    """Drop the last ``pad_size`` rows added by :func:`pad_dataproto_to_divisor`."""
    return data[: len(data) - pad_size] if pad_size else data
