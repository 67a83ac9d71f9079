"""What the CPU main job's reference pass and actor update cost, and what the padding layout changes.

Builds the main job's actor (the shipped SFT policy, AdamW, the CPU profile's mini-batch of 4 goals x 8 samples and
micro-batches of 8, KL loss) and a batch shaped like its steps (bench/RESULTS.md: 64 trajectories, prompts of 269-285
tokens, responses of 734-1,654 tokens whose model-written share is ~14%, in turns). Then times, per variant, one
reference pass (`compute_log_prob`) and one update (`update_policy`) on it:

- `consecutive+mask`: micro-batches of consecutive rows, the decoder under the padding mask (the earlier code);
- `by_length+mask`: micro-batches of rows of similar length (`MicroBatching.by_length`);
- `by_length+aligned`: and the rows moved left, so attention needs no mask (`left_aligned_rows`): today's code.

Prints a table of wall seconds and CPU seconds (the process's, all threads: on a shared machine the steadier of the
two), then one JSON line.

Usage: python bench/actor_update.py [--rows 64] [--threads 2] [--repeats 1]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def webshop_like_batch(rows: int, vocab: int, seed: int = 0):
    """Left-padded prompts and right-padded multi-turn responses of the main job's lengths."""
    import torch

    from verl.protocol import DataProto

    g = torch.Generator().manual_seed(seed)
    prompt_lens = torch.randint(269, 286, (rows,), generator=g)
    response_lens = torch.randint(734, 1655, (rows,), generator=g)
    P, R = int(prompt_lens.max()), int(response_lens.max())
    input_ids = torch.randint(3, vocab, (rows, P + R), generator=g)
    attention_mask = torch.zeros(rows, P + R, dtype=torch.long)
    response_mask = torch.zeros(rows, R, dtype=torch.long)
    for i in range(rows):
        attention_mask[i, P - int(prompt_lens[i]): P + int(response_lens[i])] = 1
        turn = int(response_lens[i]) // 5
        for t in range(5):  # 5 turns: ~14% written by the model, then the page
            response_mask[i, t * turn: t * turn + turn // 7] = 1
    input_ids = input_ids * attention_mask
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    old = -torch.rand(rows, R, generator=g) * response_mask
    tensors = {"input_ids": input_ids, "attention_mask": attention_mask, "position_ids": position_ids,
               "responses": input_ids[:, P:], "response_mask": response_mask,
               "advantages": torch.randn(rows, 1, generator=g).expand(rows, R) * response_mask,
               "rollout_log_probs": old, "ref_log_prob": old}
    return DataProto.from_dict(tensors=tensors, meta_info={"temperature": 0.5, "global_step": 1})


def run_variant(name: str, threads: int, rows: int, repeats: int) -> dict:
    import torch
    from transformers import AutoModelForCausalLM

    from verl.config.schema import ActorConfig, from_dict
    from verl.workers.agent_actor import base as actor_base
    from verl.workers.agent_actor.dp_actor import DataParallelPPOActor

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(os.path.join(ROOT, "agentenv_webshop", "sft_policy"))
    cfg = from_dict(ActorConfig, dict(ppo_mini_batch_size=32, ppo_micro_batch_size_per_gpu=8, ppo_epochs=1,
                                      use_kl_loss=True, kl_loss_coef=0.1, kl_loss_type="low_var_kl",
                                      use_rollout_log_probs=True), "actor_rollout_ref.actor")
    actor = DataParallelPPOActor(cfg, model, torch.optim.AdamW(model.parameters(), lr=5e-5))
    actor.micro_batching = replace(actor.micro_batching, by_length=not name.startswith("consecutive"))
    aligned = actor_base.left_aligned_rows
    if name.endswith("+mask"):
        actor_base.left_aligned_rows = lambda *a: None
    try:
        data = webshop_like_batch(rows, model.config.vocab_size)
        out = {"variant": name, "ref_wall": 0.0, "ref_cpu": 0.0, "update_wall": 0.0, "update_cpu": 0.0}
        for _ in range(repeats):
            w, c = time.perf_counter(), time.process_time()
            actor.compute_log_prob(data, calculate_entropy=False)
            out["ref_wall"] += time.perf_counter() - w
            out["ref_cpu"] += time.process_time() - c
            w, c = time.perf_counter(), time.process_time()
            actor.update_policy(data)
            out["update_wall"] += time.perf_counter() - w
            out["update_cpu"] += time.process_time() - c
    finally:
        actor_base.left_aligned_rows = aligned
    real = int(data.batch["attention_mask"].sum())
    out = {k: (round(v / repeats, 2) if isinstance(v, float) else v) for k, v in out.items()}
    out["real_tokens"] = real
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=64, help="trajectories (the main job: 8 goals x 8 samples)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (the main job's actor worker: 2)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--variants", default="consecutive+mask,by_length+mask,by_length+aligned")
    args = ap.parse_args()
    results = [run_variant(v, args.threads, args.rows, args.repeats) for v in args.variants.split(",")]
    print(f"{'variant':<20} {'ref wall s':>10} {'ref cpu s':>10} {'update wall s':>14} {'update cpu s':>13}")
    for r in results:
        print(f"{r['variant']:<20} {r['ref_wall']:>10.1f} {r['ref_cpu']:>10.1f} {r['update_wall']:>14.1f} "
              f"{r['update_cpu']:>13.1f}")
    print(json.dumps({"rows": args.rows, "threads": args.threads, "load_average": os.getloadavg()[0],
                      "results": results}))


if __name__ == "__main__":
    main()
