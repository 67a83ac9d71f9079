"""Ray worker groups: a list of Ray actors of one worker class, with broadcast calls (`call_all`) and
data-parallel calls (`call_dp`, `submit_dp` -> `DPCall`: the batch split across the ranks, padded to a multiple
of the world size, the answers concatenated and their metrics reduced over every rank).

Owns placing the ranks (per-node placement groups, `verl.utils.ray_placement`) and the environment each rank gets
for torch.distributed (rank, world size, the rank-0 store's address). The trainer (`ray_trainer`) and the rollout
overlap (`rollout_overlap`) use it; it knows nothing of the training loop.
"""
from __future__ import annotations

from typing import Any

from verl.agent_trainer.ppo import metric_utils
from verl.protocol import DataProto
from verl.utils.ray_placement import NodePlacement

__all__ = ["WorkerGroup", "DPCall", "free_port"]


class WorkerGroup:
    """A list of Ray actors of one worker class: broadcast calls and data-parallel calls.

    Args:
        cls: the plain worker class (wrapped with `ray.remote` here).
        args: constructor arguments (same for every rank).
        world_size: number of ranks.
        num_cpus: CPUs per actor (fractional: two whole-CPU actors on a 2-core host starve later tasks).
        num_gpus: GPUs per actor (fractional when roles share a GPU).
        name: for error messages and Ray actor names.
        concurrency_groups: Ray concurrency groups `{name: max_concurrency}` beside the default group
            (which still runs one call at a time), e.g. the rollout that overlaps the update.
    """

    def __init__(self, cls: type, args: tuple, world_size: int = 1, num_cpus: float = 0.5, num_gpus: float = 0.0,
                 name: str = "worker", env_vars: dict | None = None, placement: NodePlacement | None = None,
                 concurrency_groups: dict[str, int] | None = None):
        import ray

        self.name, self.world_size = name, world_size
        if placement is not None and placement.world_size != world_size:
            raise ValueError(f"{name}: placement holds {placement.world_size} ranks, the group has {world_size}")
        # rank 0 hosts torch.distributed's store: its node's IP when the ranks are placed on nodes
        master_addr = (placement.node_ips[0] if placement is not None
                       else ray.util.get_node_ip_address() if world_size > 1 else "127.0.0.1")
        master_port = str(free_port())
        self.workers = []
        for rank in range(world_size):
            # Ray narrows CUDA_VISIBLE_DEVICES to the actor's own GPU, so its local device index is 0.
            env = {"RANK": str(rank), "LOCAL_RANK": "0", "WORLD_SIZE": str(world_size),
                   "MASTER_ADDR": master_addr, "MASTER_PORT": master_port, **(env_vars or {})}
            options: dict[str, Any] = {"runtime_env": {"env_vars": env}}
            if placement is not None:  # rank r of every group shares bundle r (node r // per_node)
                options["scheduling_strategy"] = placement.rank_strategy(rank)
            remote_opts = {"concurrency_groups": concurrency_groups} if concurrency_groups else {}
            remote_cls = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, **remote_opts)(cls)
            self.workers.append(remote_cls.options(**options).remote(*args))

    def node_ids(self) -> list[str]:
        """The Ray node of each rank."""
        import ray

        return ray.get([w.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id())
                        for w in self.workers])

    def call_all(self, method: str, *args, **kwargs) -> list:
        """Call `method` on every rank; return every rank's result."""
        import ray

        return ray.get([getattr(w, method).remote(*args, **kwargs) for w in self.workers])

    def call_rank0(self, method: str, *args, **kwargs):
        """Call on every rank (collectives need all of them), return rank 0's result."""
        return self.call_all(method, *args, **kwargs)[0]

    def call_dp(self, method: str, data: DataProto) -> DataProto:
        """Split `data` across ranks (padding to a multiple of world_size), call, concatenate; the ranks'
        metrics are reduced over all of them (`metric_utils.reduce_rank_metrics`)."""
        return self.submit_dp(method, data).result()

    def submit_dp(self, method: str, data: DataProto, concurrency_group: str | None = None) -> "DPCall":
        """`call_dp` without waiting: returns the call in flight. `concurrency_group` runs it in that Ray
        concurrency group of the actors (declared with `concurrency_groups`), beside the default group."""
        from verl.protocol import pad_dataproto_to_divisor

        def submit(worker, chunk):
            fn = getattr(worker, method)
            return (fn.options(concurrency_group=concurrency_group) if concurrency_group else fn).remote(chunk)

        if self.world_size == 1:
            return DPCall([submit(self.workers[0], data)], pad=None)
        padded, pad = pad_dataproto_to_divisor(data, self.world_size)
        chunks = padded.chunk(self.world_size)
        return DPCall([submit(w, c) for w, c in zip(self.workers, chunks, strict=True)], pad=pad)

    def kill(self) -> None:
        import ray

        for w in self.workers:
            ray.kill(w)
        self.workers = []


class DPCall:
    """A data-parallel call in flight (`WorkerGroup.submit_dp`): one Ray object per rank."""

    def __init__(self, refs: list, pad: int | None):
        self.refs, self.pad = refs, pad

    def result(self) -> DataProto:
        """Wait; the ranks' answers concatenated (padding removed), their metrics reduced over all ranks."""
        import ray

        from verl.protocol import unpad_dataproto

        outs = ray.get(self.refs)
        if self.pad is None:  # one rank: its answer as it is
            return outs[0]
        meta = metric_utils.reduce_rank_metrics([o.meta_info for o in outs])  # every rank's metrics, not rank 0's
        if len(outs[0]) == 0:  # meta-only answers (update_* metrics)
            return DataProto(meta_info=meta)
        out = DataProto.concat(outs)
        out.meta_info = meta
        return unpad_dataproto(out, self.pad)




def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the rank-0 store of a one-node group)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
