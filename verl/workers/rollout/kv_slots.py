"""The HF engine's KV memory: one preallocated row per live request, and a token-budget store of finished turns.

`SlotKV` is the cache object handed to a transformers model as its `cache` argument. Row i of every
layer's key/value buffer (rows, kv_heads, width, head_dim) holds live request i, left-aligned: its
token at position p sits in column p, so position ids are column indices and a row never holds
padding in the middle. Live rows stay packed in rows [0, n): a decode step runs over the views
`keys[:n, :, :max_len + 1]` (no gather, no copy), writes one column per row, and the engine passes a
4-D additive mask (a row attends its own first len + 1 columns). A request that finishes leaves
through `release`: its KV is handed to the `PrefixStore` and the last live row moves into its place
(one row's columns copied, never the whole cache). Joining requests take rows n, n+1, ...: their
reused prefix is copied in and their new tokens are written by a prefill forward over those rows
only (`begin_prefill`), so the rows already decoding are not touched. Buffers grow (rows or width)
by reallocation when needed; that copy happens a logarithmic number of times per rollout.

`PrefixStore` keeps, per finished request, the KV of its prompt + generated ids (what the row held)
up to a budget in tokens, least recently used first out. The same trajectory's next turn starts with
exactly that sequence, so its prefill covers only the new observation; another trajectory reuses the
common part (the shared instructions). Engines clear it when the weights change.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import torch

__all__ = ["SlotKV", "PrefixStore"]


class SlotKV:
    """Per-row preallocated KV buffers for every layer (see the module docstring).

    Args:
        num_layers, kv_heads, head_dim: the model's attention shape.
        dtype, device: of the buffers.
        rows, width: initial capacity (both grow on demand).
    """

    def __init__(self, num_layers: int, kv_heads: int, head_dim: int, dtype: torch.dtype, device: torch.device,
                 rows: int = 8, width: int = 256):
        self.num_layers, self.kv_heads, self.head_dim = num_layers, kv_heads, head_dim
        self.dtype, self.device = dtype, device
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self.lens: list[int] = []  # tokens held by each live row (host copy; rows [0, n))
        self._alloc(max(rows, 1) + 1, max(width, 16))  # + 1: the scratch row that padding tokens write to
        self._write: tuple[torch.Tensor, torch.Tensor] | None = None  # (row ids, column ids) of this forward
        self._view: tuple[int, int, int] = (0, 0, 0)  # rows [start, stop), width of what attention reads

    # ------------------------------------------------------------------ capacity
    @property
    def n(self) -> int:
        """Live rows."""
        return len(self.lens)

    @property
    def row_capacity(self) -> int:
        return self.keys[0].shape[0] - 1

    @property
    def width(self) -> int:
        return self.keys[0].shape[2]

    def _alloc(self, rows: int, width: int) -> None:
        shape = (rows, self.kv_heads, width, self.head_dim)
        old_k, old_v = self.keys, self.values
        self.keys = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in range(self.num_layers)]
        self.values = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in range(self.num_layers)]
        if old_k and self.lens:
            n, w = self.n, max(self.lens)
            for new, old in zip(self.keys + self.values, old_k + old_v, strict=True):
                new[:n, :, :w] = old[:n, :, :w]

    def reserve(self, rows: int, width: int) -> None:
        """Make room for `rows` live rows of `width` columns (grows by 1.5x steps, copying live rows once)."""
        if rows <= self.row_capacity and width <= self.width:
            return
        new_rows = max(rows, int(self.row_capacity * 1.5) if rows > self.row_capacity else self.row_capacity)
        new_width = max(width, int(self.width * 1.5) if width > self.width else self.width)
        self._alloc(new_rows + 1, -(-new_width // 64) * 64)

    def free(self) -> None:
        """Drop every row and shrink the buffers to nothing (memory release between rollouts)."""
        self.lens = []
        self.keys, self.values = [], []
        self._alloc(2, 16)

    def used_tokens(self) -> int:
        return sum(self.lens)

    # ------------------------------------------------------------------ rows
    def add_row(self, prefix: list[tuple[torch.Tensor, torch.Tensor]] | None, cached: int) -> int:
        """Append a live row holding the first `cached` columns of `prefix` ([(k, v)] per layer,
        each (kv_heads, >= cached, head_dim)); returns its index. Call `reserve` first."""
        row = self.n
        if cached:
            for layer, (k, v) in enumerate(prefix):
                self.keys[layer][row, :, :cached] = k[:, :cached]
                self.values[layer][row, :, :cached] = v[:, :cached]
        self.lens.append(cached)
        return row

    def row_kv(self, row: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """A copy of row `row`'s KV ([(k, v)] per layer, (kv_heads, len, head_dim))."""
        n = self.lens[row]
        return [(k[row, :, :n].clone(), v[row, :, :n].clone()) for k, v in zip(self.keys, self.values, strict=True)]

    def release(self, finished: list[int]) -> list[int]:
        """Remove the rows `finished`; the last live rows move into the holes. Returns the new order:
        `order[j]` is the old index of the row now at j (apply it to every per-row tensor)."""
        gone = set(finished)
        n_new = self.n - len(gone)
        holes = [i for i in range(n_new) if i in gone]
        movers = [i for i in range(n_new, self.n) if i not in gone]
        order = list(range(n_new))
        for hole, mover in zip(holes, movers, strict=True):
            w = self.lens[mover]
            for buf in self.keys + self.values:
                buf[hole, :, :w] = buf[mover, :, :w]
            order[hole] = mover
        self.lens = [self.lens[i] for i in order]
        return order

    # ------------------------------------------------------------------ forwards
    def begin_decode(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Set up a decode step over every live row; returns (position ids (n, 1), 4-D mask)."""
        n, dev = self.n, self.device
        pos = torch.tensor(self.lens, dtype=torch.long, device=dev)
        width = max(self.lens) + 1
        self.reserve(n, width)
        self._write = (torch.arange(n, device=dev).unsqueeze(-1), pos.unsqueeze(-1))
        self._view = (0, n, width)
        visible = torch.arange(width, device=dev).unsqueeze(0) <= pos.unsqueeze(-1)  # (n, width)
        self.lens = [x + 1 for x in self.lens]
        return pos.unsqueeze(-1), self._mask(visible[:, None, None, :])

    def begin_prefill(self, start: int, suffix_lens: list[int], width_in: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Set up a forward of rows [start, start + k) whose new tokens are left-padded to `width_in`
        (row i: `suffix_lens[i]` real tokens after its `lens` cached ones). Returns (position ids
        (k, width_in), 4-D mask). Padding tokens write to the scratch row and attend column 0 only."""
        k, dev = len(suffix_lens), self.device
        cached = torch.tensor(self.lens[start:start + k], dtype=torch.long, device=dev).unsqueeze(-1)
        real = torch.tensor(suffix_lens, dtype=torch.long, device=dev).unsqueeze(-1)
        j = torch.arange(width_in, device=dev).unsqueeze(0)          # (1, width_in)
        is_real = j >= width_in - real                               # (k, width_in)
        pos = torch.where(is_real, cached + j - (width_in - real), torch.zeros_like(j))
        width = int((cached + real).max())
        self.reserve(self.n, width + 1)
        rows = torch.where(is_real, torch.arange(start, start + k, device=dev).unsqueeze(-1),
                           torch.full_like(pos, self.row_capacity))  # scratch row
        self._write = (rows, pos)
        self._view = (start, start + k, width)
        cols = torch.arange(width, device=dev)
        visible = (cols.view(1, 1, -1) <= pos.unsqueeze(-1)) & is_real.unsqueeze(-1)
        visible[..., 0] |= ~is_real                                  # padding queries see column 0 only
        for i, r in enumerate(suffix_lens):
            self.lens[start + i] += r
        return pos, self._mask(visible.unsqueeze(1))

    def _mask(self, visible: torch.Tensor) -> torch.Tensor:
        """Additive mask in the cache dtype (0 where visible, the dtype's minimum elsewhere)."""
        return torch.zeros(visible.shape, dtype=self.dtype, device=self.device).masked_fill_(
            ~visible, torch.finfo(self.dtype).min)

    # ------------------------------------------------------------------ transformers' Cache protocol
    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, layer_idx: int, *args, **kwargs):
        """Write this forward's keys/values (rows, kv_heads, q_len, head_dim) and return what attention reads."""
        rows, cols = self._write
        self.keys[layer_idx][rows, :, cols] = key_states.transpose(1, 2)
        self.values[layer_idx][rows, :, cols] = value_states.transpose(1, 2)
        start, stop, width = self._view
        return self.keys[layer_idx][start:stop, :, :width], self.values[layer_idx][start:stop, :, :width]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return max(self.lens, default=0)


class PrefixStore:
    """LRU of finished requests' KV, keyed by the token sequence it encodes, within `max_tokens`.

    A lookup reuses the longest common prefix with any stored sequence (a trajectory's previous turn,
    or the shared instructions of another trajectory). An entry that is wholly a prefix of the new
    request is removed: the request's own entry will extend it.
    """

    def __init__(self, max_tokens: int):
        self.max_tokens = max(int(max_tokens), 0)
        self.entries: OrderedDict[int, tuple[np.ndarray, list]] = OrderedDict()
        self.tokens = 0
        self._next = 0

    def clear(self) -> None:
        self.entries.clear()
        self.tokens = 0

    def lookup(self, ids: list[int]) -> tuple[int, list | None]:
        """Return (length, kv) of the longest reusable prefix of `ids` (at most len(ids) - 1 tokens)."""
        if not self.entries:
            return 0, None
        query = np.asarray(ids, dtype=np.int64)
        best_key, best_len = None, 0
        for key, (stored, _) in self.entries.items():
            m = min(len(stored), len(query) - 1)
            if m <= best_len:
                continue
            diff = np.flatnonzero(stored[:m] != query[:m])
            lcp = int(diff[0]) if diff.size else m
            if lcp > best_len:
                best_key, best_len = key, lcp
        if best_key is None:
            return 0, None
        stored, kv = self.entries[best_key]
        if best_len == len(stored):  # superseded by this request's own entry
            del self.entries[best_key]
            self.tokens -= len(stored)
        else:
            self.entries.move_to_end(best_key)
        return best_len, kv

    def store(self, ids: list[int], kv: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Keep `kv` ([(k, v)] per layer, (kv_heads, len(ids), head_dim)) as the encoding of `ids`."""
        if not ids or len(ids) > self.max_tokens:
            return
        self._next += 1
        self.entries[self._next] = (np.asarray(ids, dtype=np.int64), kv)
        self.tokens += len(ids)
        self.shrink(self.max_tokens)

    def shrink(self, max_tokens: int) -> None:
        """Evict least recently used entries until at most `max_tokens` are held."""
        while self.tokens > max_tokens and self.entries:
            _, (old, _) = self.entries.popitem(last=False)
            self.tokens -= len(old)
