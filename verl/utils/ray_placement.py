"""Where things run on a Ray cluster: the nodes there are, and one placement group per training node.

We describe placement; Ray does the scheduling. `node_placement(nnodes, per_node, bundle)` picks
`nnodes` alive nodes that can each hold `per_node` bundles (the driver's node first), and reserves
one STRICT_PACK placement group per node, pinned to it with Ray's `ray.io/node-id` label, so rank r
of every worker group lands on node r // per_node, bundle r % per_node. `alive_nodes` lists nodes
for the env fleet's choice (GPU-less nodes first).
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any

__all__ = ["alive_nodes", "node_has_gpu", "node_fits", "NodePlacement", "node_placement"]

logger = logging.getLogger(__name__)

NODE_ID_LABEL = "ray.io/node-id"


def alive_nodes() -> list[dict]:
    """The cluster's alive nodes (`ray.nodes()` entries), the driver's node first, then by node id."""
    import ray

    here = ray.get_runtime_context().get_node_id()
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return sorted(nodes, key=lambda n: (n["NodeID"] != here, n["NodeID"]))


def node_has_gpu(node: dict) -> bool:
    return node.get("Resources", {}).get("GPU", 0) > 0


def node_fits(node: dict, need: dict[str, float]) -> bool:
    """True when `node`'s total resources cover `need` (e.g. {"CPU": 0.5, "GPU": 1})."""
    have = node.get("Resources", {})
    return all(have.get(k, 0.0) + 1e-9 >= v for k, v in need.items() if v)


@dataclasses.dataclass
class NodePlacement:
    """Per-node placement groups for `nnodes x per_node` ranks.

    Attributes:
        groups: one placement group per node (`per_node` bundles each).
        node_ids: the node of each group.
        node_ips: the IP of each node (rank 0's is the MASTER_ADDR of torch.distributed).
        per_node: bundles (ranks) per node.
    """

    groups: list
    node_ids: list[str]
    node_ips: list[str]
    per_node: int

    @property
    def world_size(self) -> int:
        return len(self.groups) * self.per_node

    def rank_strategy(self, rank: int) -> Any:
        """Ray scheduling strategy that puts `rank` into its bundle."""
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        return PlacementGroupSchedulingStrategy(placement_group=self.groups[rank // self.per_node],
                                                placement_group_bundle_index=rank % self.per_node)

    def remove(self) -> None:
        """Release the reservations (after the actors placed in them are gone)."""
        from ray.util.placement_group import remove_placement_group

        for pg in self.groups:
            remove_placement_group(pg)
        self.groups = []


def node_placement(nnodes: int, per_node: int, bundle: dict[str, float], timeout_s: float = 600) -> NodePlacement:
    """Reserve `per_node` bundles of `bundle` (e.g. {"GPU": 1, "CPU": 0.5}) on each of `nnodes` nodes.

    Raises:
        ValueError: the cluster has fewer than `nnodes` nodes able to hold `per_node` bundles (the
            message names the counts and how to add nodes).
    """
    import ray
    from ray.util.placement_group import placement_group

    need = {k: v * per_node for k, v in bundle.items()}
    nodes = alive_nodes()
    fitting = [n for n in nodes if node_fits(n, need)]
    if len(fitting) < nnodes:
        raise ValueError(
            f"trainer.nnodes={nnodes} needs {nnodes} Ray nodes with {need} each, but the cluster has "
            f"{len(fitting)} such node(s) of {len(nodes)} alive. Add nodes with `ray start --address=<head ip>:6379` "
            "(and ray_init.address=auto here), or lower trainer.nnodes / trainer.n_gpus_per_node")
    chosen = fitting[:nnodes]
    groups = [placement_group([dict(bundle) for _ in range(per_node)], strategy="STRICT_PACK",
                              bundle_label_selector=[{NODE_ID_LABEL: n["NodeID"]} for _ in range(per_node)])
              for n in chosen]
    ray.get([pg.ready() for pg in groups], timeout=timeout_s)
    logger.info("placement: %d node(s) x %d rank(s) of %s on %s", nnodes, per_node, bundle,
                [n["NodeManagerAddress"] for n in chosen])
    return NodePlacement(groups=groups, node_ids=[n["NodeID"] for n in chosen],
                         node_ips=[n["NodeManagerAddress"] for n in chosen], per_node=per_node)
