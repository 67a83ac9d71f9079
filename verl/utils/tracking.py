"""Experiment tracking: one `Tracking` object fans metrics out to the configured backends.

Backends (`trainer.logger`): `console` (one log line per step), `file` (JSON lines),
`tensorboard` (`torch.utils.tensorboard`), `wandb` (imported lazily; `WANDB_MODE=offline` works
without network). New backends register with `register_backend`. This module owns where metrics
go, not what they are (see `agent_trainer/ppo/metric_utils.py`).
"""
from __future__ import annotations

import json
import logging
import math
import os
import time
from typing import Any, Sequence

from verl.utils.registry import Registry

__all__ = ["Tracking", "register_backend", "get_backend_cls", "BACKENDS"]

logger = logging.getLogger(__name__)

BACKENDS = Registry("tracking backend", "trainer.logger")


def register_backend(name: str):
    """Class decorator registering a tracking backend under a `trainer.logger` value."""
    return BACKENDS.register(name)


def get_backend_cls(name: str):
    """The backend class for `name`; the error lists the choices."""
    return BACKENDS.get(name)


def _scalar(value: Any) -> float | None:
    try:
        if hasattr(value, "item"):
            value = value.item()
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value


@register_backend("console")
class ConsoleBackend:
    """One INFO line per step: `step:N - key:value - ...` (sorted keys)."""

    def __init__(self, **_):
        pass

    def log(self, data: dict, step: int) -> None:
        parts = []
        for key in sorted(data):
            value = _scalar(data[key])
            parts.append(f"{key}:{value:.4g}" if value is not None else f"{key}:{data[key]}")
        logger.info("step:%d - %s", step, " - ".join(parts))

    def finish(self) -> None:
        pass


@register_backend("file")
class JsonlBackend:
    """Appends `{"step": N, "time": t, **metrics}` lines to `<log_dir>/metrics.jsonl`."""

    def __init__(self, log_dir: str, **_):
        os.makedirs(log_dir, exist_ok=True)
        self.path = os.path.join(log_dir, "metrics.jsonl")
        self._fh = open(self.path, "a", encoding="utf-8")

    def log(self, data: dict, step: int) -> None:
        record: dict[str, Any] = {"step": step, "time": time.time()}
        for key, value in data.items():
            scalar = _scalar(value)
            if scalar is None:
                record[key] = str(value)
            else:  # JSON has no NaN/inf; keep them readable as strings
                record[key] = scalar if math.isfinite(scalar) else str(scalar)
        self._fh.write(json.dumps(record) + "\n")
        self._fh.flush()

    def finish(self) -> None:
        if not self._fh.closed:
            self._fh.close()


@register_backend("tensorboard")
class TensorboardBackend:
    """Scalars to `$TENSORBOARD_DIR` or `<log_dir>/tensorboard`."""

    def __init__(self, log_dir: str, **_):
        from torch.utils.tensorboard import SummaryWriter

        self.dir = os.environ.get("TENSORBOARD_DIR") or os.path.join(log_dir, "tensorboard")
        self.writer = SummaryWriter(self.dir)

    def log(self, data: dict, step: int) -> None:
        for key, value in data.items():
            scalar = _scalar(value)
            if scalar is not None:
                self.writer.add_scalar(key, scalar, step)
        self.writer.flush()

    def finish(self) -> None:
        self.writer.close()


@register_backend("wandb")
class WandbBackend:
    """Weights & Biases (lazy import). Offline: `WANDB_MODE=offline` writes under `<log_dir>/wandb`."""

    def __init__(self, project_name: str, experiment_name: str, config: dict | None, log_dir: str, **_):
        try:
            import wandb
        except ImportError as exc:
            raise ImportError("trainer.logger includes 'wandb' but wandb is not installed; "
                              "pip install 'webagent-rl[wandb]' or drop 'wandb' from trainer.logger") from exc
        os.makedirs(log_dir, exist_ok=True)
        self.run = wandb.init(project=project_name, name=experiment_name, config=config, dir=log_dir, reinit=True)

    def log(self, data: dict, step: int) -> None:
        self.run.log({k: v for k, v in data.items() if _scalar(v) is not None}, step=step)

    def finish(self) -> None:
        self.run.finish()


class Tracking:
    """Log a metrics dict to every configured backend.

    Args:
        project_name: `trainer.project_name`.
        experiment_name: `trainer.experiment_name`.
        default_backend: backend names (`trainer.logger`), a string or a list.
        config: the full config as a plain dict (sent to wandb, written to `config.json`).
        log_dir: directory for the file/tensorboard/wandb outputs.
    """

    def __init__(self, project_name: str, experiment_name: str, default_backend: Sequence[str] | str = "console",
                 config: dict | None = None, log_dir: str | None = None):
        names = [default_backend] if isinstance(default_backend, str) else list(default_backend)
        self.log_dir = log_dir or os.path.join("tracking_logs", project_name, experiment_name)
        self.backends: dict[str, Any] = {}
        for name in names:
            cls = get_backend_cls(name)
            self.backends[name] = cls(project_name=project_name, experiment_name=experiment_name, config=config,
                                      log_dir=self.log_dir)
        if config is not None and any(n != "console" for n in names):
            os.makedirs(self.log_dir, exist_ok=True)
            with open(os.path.join(self.log_dir, "config.json"), "w", encoding="utf-8") as fh:
                json.dump(config, fh, indent=1, default=str)

    def log(self, data: dict, step: int, backend: Sequence[str] | None = None) -> None:
        """Send `data` (name -> scalar) at `step` to all (or the named) backends."""
        for name, be in self.backends.items():
            if backend is None or name in backend:
                be.log(data, step)

    def finish(self) -> None:
        """Flush and close every backend (safe to call twice)."""
        backends, self.backends = self.backends, {}
        for be in backends.values():
            be.finish()

    def __del__(self):  # best effort: files are flushed after every log call anyway
        try:
            self.finish()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
