"""Trainer checkpoints: the directory layout, trainer state (step, RNG, dataloader position),
`latest_checkpointed_iteration.txt`, rotation, and resume resolution.

Layout (verl's):

    <default_local_dir>/
      latest_checkpointed_iteration.txt   # "N", written last: a step dir is complete once it is named here
      global_step_N/
        actor/            # written by the actor worker's save_checkpoint (model, optimizer, scheduler, RNG)
          huggingface/    # export_hf: loadable by AutoModelForCausalLM / AutoTokenizer
          lora_adapter/   # with LoRA, instead of model_*.pt: the adapter (verl.utils.lora), files <= MAX_SHARD_BYTES
        critic/           # critic worker's save_checkpoint (when a critic is trained)
        trainer_state.pt  # global step, dataloader state, driver RNG states, config

Model/optimizer contents are the workers' business; this module owns everything around them.
"""
from __future__ import annotations

import logging
import os
import random
import re
import shutil
from typing import Sequence

import numpy as np
import torch

__all__ = ["CheckpointManager", "capture_rng_state", "restore_rng_state", "save_atomic", "save_sharded",
           "load_sharded", "split_by_size", "tensor_bytes", "LATEST_FILE", "TRAINER_STATE_FILE", "MAX_SHARD_BYTES"]

logger = logging.getLogger(__name__)

LATEST_FILE = "latest_checkpointed_iteration.txt"
TRAINER_STATE_FILE = "trainer_state.pt"
_STEP_DIR = re.compile(r"^global_step_(\d+)$")
MAX_SHARD_BYTES = 16 * 2**20  # LoRA checkpoints: the largest file (adapter and optimizer shards) holds at most this
_SHARDS_KEY = "__shards__"    # save_sharded: the other files' names, in the first file
_PER_TENSOR_BYTES = 1024      # split_by_size's allowance per tensor for the file format (zip record, pickle,
                              # alignment; a safetensors header entry): ~300 bytes are used


def to_cpu(obj):
    """`obj` with every tensor in it (nested dicts, lists, tuples; DTensors keep their sharding) moved to CPU.

    Checkpoints are written through this, so a resume on another device or a CPU-side tool can read them
    without `map_location`.
    """
    if isinstance(obj, torch.Tensor):
        return obj.detach().to("cpu")
    if isinstance(obj, dict):
        return type(obj)((k, to_cpu(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_cpu(v) for v in obj)
    return obj


def save_atomic(obj, path: str) -> None:
    """`torch.save(obj, path)` through a temporary file and a rename, so `path` is either absent, the old file,
    or the whole new one: a reader (another rank, a crashed run's resume) never sees half a file."""
    tmp = path + ".tmp"
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def tensor_bytes(obj) -> int:
    """Bytes of tensor data in `obj` (tensors inside nested dicts, lists and tuples)."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


def _file_bytes(obj) -> int:
    """An upper bound of the bytes `obj` takes in a file: its tensor data plus _PER_TENSOR_BYTES per tensor."""
    if isinstance(obj, torch.Tensor):
        return tensor_bytes(obj) + _PER_TENSOR_BYTES
    if isinstance(obj, dict):
        return sum(_file_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_file_bytes(v) for v in obj)
    return 0


def split_by_size(mapping: dict, max_bytes: int) -> list[dict]:
    """`mapping` cut, in order, into dicts that each take at most `max_bytes` in a file (tensor data and a
    per-tensor allowance for the file format; an entry larger than that gets a dict of its own); always at
    least one dict."""
    parts: list[dict] = [{}]
    size = 0
    for key, value in mapping.items():
        nbytes = _file_bytes(value)
        if parts[-1] and size + nbytes > max_bytes:
            parts.append({})
            size = 0
        parts[-1][key] = value
        size += nbytes
    return parts


def save_sharded(obj: dict, path: str, max_bytes: int, keys: Sequence[str]) -> list[str]:
    """`save_atomic(obj, path)`, with the mappings `obj[key]` for `key` in `keys` (e.g. an optimizer's `state`)
    split so that no file is larger than `max_bytes` unless one entry is: the parts go to
    `path` with `.1`, `.2`, ... before its extension, and `path` holds the rest of `obj` and their names.
    `load_sharded` reads it back; an `obj` that fits is one file, as `save_atomic` writes it.

    Returns:
        The files written.
    """
    if _file_bytes(obj) <= max_bytes:
        save_atomic(obj, path)
        return [path]
    root, ext = os.path.splitext(path)
    head = {k: v for k, v in obj.items() if k not in keys}
    head[_SHARDS_KEY] = []
    written = []
    for key in keys:
        for part in split_by_size(obj[key], max_bytes):
            name = f"{root}.{len(written) + 1}{ext}"
            save_atomic(part, name)
            written.append(name)
            head[_SHARDS_KEY].append((key, os.path.basename(name)))
    save_atomic(head, path)  # last: the parts it names are complete
    return [path, *written]


def load_sharded(path: str) -> dict:
    """What `save_sharded` wrote to `path` (also a file `save_atomic` wrote), as one dict on CPU."""
    obj = torch.load(path, map_location="cpu", weights_only=False)
    for key, name in obj.pop(_SHARDS_KEY, None) or []:
        part = torch.load(os.path.join(os.path.dirname(path), name), map_location="cpu", weights_only=False)
        obj.setdefault(key, {}).update(part)
    return obj


def capture_rng_state() -> dict:
    """RNG states of python `random`, numpy's global generator and torch (CPU, and CUDA if present)."""
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict) -> None:
    """Inverse of `capture_rng_state`."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class CheckpointManager:
    """Save/find/rotate step checkpoints under `root_dir` (`trainer.default_local_dir`).

    Args:
        root_dir: the checkpoint root.
        max_to_keep: keep only the newest N step directories (None: keep all).
    """

    def __init__(self, root_dir: str, max_to_keep: int | None = None):
        self.root_dir = os.path.abspath(os.path.expanduser(root_dir))
        self.max_to_keep = max_to_keep

    def step_dir(self, step: int) -> str:
        return os.path.join(self.root_dir, f"global_step_{step}")

    def saved_steps(self) -> list[int]:
        """Steps with a complete directory (trainer state present), ascending."""
        if not os.path.isdir(self.root_dir):
            return []
        steps = []
        for name in os.listdir(self.root_dir):
            match = _STEP_DIR.match(name)
            if match and os.path.exists(os.path.join(self.root_dir, name, TRAINER_STATE_FILE)):
                steps.append(int(match.group(1)))
        return sorted(steps)

    def latest_step(self) -> int | None:
        """The step named in `latest_checkpointed_iteration.txt` if its directory is complete, else the
        newest complete step directory, else None."""
        path = os.path.join(self.root_dir, LATEST_FILE)
        if os.path.exists(path):
            text = open(path, encoding="utf-8").read().strip()
            if text.isdigit() and os.path.exists(os.path.join(self.step_dir(int(text)), TRAINER_STATE_FILE)):
                return int(text)
            logger.warning("%s names %r, which is not a complete checkpoint; scanning %s", path, text, self.root_dir)
        steps = self.saved_steps()
        return steps[-1] if steps else None

    def save_trainer_state(self, step: int, dataloader_state: dict, extra: dict | None = None) -> str:
        """Write `global_step_N/trainer_state.pt`, then mark the step as latest and rotate old ones.

        Call after the workers have written their parts into `step_dir(step)`.

        Returns:
            The step directory.
        """
        step_dir = self.step_dir(step)
        os.makedirs(step_dir, exist_ok=True)
        state = {"global_step": step, "dataloader": dataloader_state, "rng": capture_rng_state(), **(extra or {})}
        save_atomic(to_cpu(state), os.path.join(step_dir, TRAINER_STATE_FILE))
        latest_tmp = os.path.join(self.root_dir, LATEST_FILE + ".tmp")
        with open(latest_tmp, "w", encoding="utf-8") as fh:
            fh.write(str(step))
        os.replace(latest_tmp, os.path.join(self.root_dir, LATEST_FILE))
        self._rotate(keep=step)
        return step_dir

    def load_trainer_state(self, step_dir: str, restore_rng: bool = True) -> dict:
        """Read `trainer_state.pt` from a step directory (and restore the driver RNG).

        Raises:
            FileNotFoundError: naming the directory when it holds no trainer state.
        """
        path = os.path.join(step_dir, TRAINER_STATE_FILE)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{step_dir!r} is not a complete checkpoint (no {TRAINER_STATE_FILE}); "
                                    f"point trainer.resume_from_path at a global_step_N directory")
        state = torch.load(path, map_location="cpu", weights_only=False)
        if restore_rng:
            restore_rng_state(state["rng"])
        return state

    def resolve_resume(self, resume_mode: str, resume_from_path: str | None = None) -> str | None:
        """The step directory to resume from, or None to start fresh.

        `disable`: None. `auto`: the latest complete step under root_dir (None if there is none).
        `resume_path`: `resume_from_path` (must be a complete step directory).
        """
        if resume_mode == "disable":
            return None
        if resume_mode == "auto":
            step = self.latest_step()
            return None if step is None else self.step_dir(step)
        if resume_mode == "resume_path":
            if not resume_from_path:
                raise ValueError("trainer.resume_mode=resume_path needs trainer.resume_from_path")
            path = os.path.abspath(os.path.expanduser(resume_from_path))
            if not _STEP_DIR.match(os.path.basename(path.rstrip("/"))):
                raise ValueError(f"trainer.resume_from_path={resume_from_path!r} must be a global_step_N directory")
            if not os.path.exists(os.path.join(path, TRAINER_STATE_FILE)):
                raise FileNotFoundError(f"trainer.resume_from_path={resume_from_path!r} holds no {TRAINER_STATE_FILE}")
            return path
        raise ValueError(f"trainer.resume_mode={resume_mode!r}; choose auto, disable or resume_path")

    @staticmethod
    def step_of(step_dir: str) -> int:
        """N from a `.../global_step_N` path."""
        match = _STEP_DIR.match(os.path.basename(step_dir.rstrip("/")))
        if not match:
            raise ValueError(f"{step_dir!r} is not a global_step_N directory")
        return int(match.group(1))

    def _rotate(self, keep: int) -> None:
        if not self.max_to_keep:
            return
        steps = self.saved_steps()
        for step in steps[:-self.max_to_keep]:
            if step != keep:
                shutil.rmtree(self.step_dir(step), ignore_errors=True)
                logger.info("removed old checkpoint %s (trainer.max_actor_ckpt_to_keep=%d)", self.step_dir(step),
                            self.max_to_keep)
