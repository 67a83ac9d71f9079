"""verl-format parquet for the interaction recipe, from AgentGym-style item-id lists.

    python scripts/data_preprocess/webshop_multiturn_w_interaction.py --input_file AgentItemId/webshop_train.json \
        --local_save_dir ~/data/webshop [--test_file AgentItemId/webshop_test.json] [--num_samples N]

(and the `webarena_` twin). Writes `train.parquet` (from --input_file) and `test.parquet` (from --test_file,
default the task's AgentItemId/<task>_test.json), one row per item id:

    data_source  "<task>"                   ability  "agent"
    prompt       the chat before the first observation: the system line (AgentGym-RL's Qwen line; with
                 --model_path, that model family's default: none for a non-Qwen model) and the env client's
                 conversation start (its instruction as a user turn, "Ok." as an assistant turn);
                 the interaction supplies the first observation when it starts
    reward_model {"style": "interaction"}
    extra_info   {"split", "index", "item_id", "interaction_kwargs": {"name": "<task>", "session_id": <index>}}
"""
from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from agentenv.item_ids import load_item_id_file  # noqa: E402
from verl.utils.agentgym.client import envclient_classes  # noqa: E402
from verl.workers.rollout.tokenizer import DEFAULT_SYSTEM_PROMPT, default_system_prompt, initial_messages  # noqa: E402

__all__ = ["interaction_rows", "main"]


def interaction_rows(item_id_file: str, task: str, split: str, num_samples: int | None = None,
                     system_prompt: str | None = DEFAULT_SYSTEM_PROMPT) -> list[dict]:
    """The parquet rows (see the module docstring) for the item ids of `task` in `item_id_file`."""
    start = envclient_classes[task].conversation_start
    prompt = initial_messages(system_prompt, start, "")[:-1]  # the observation comes from the interaction
    rows = []
    for entry in load_item_id_file(item_id_file, "item_id"):
        if entry["task_name"] != task:
            continue
        index = int(entry["index"])
        rows.append({"data_source": task, "prompt": prompt, "ability": "agent",
                     "reward_model": {"style": "interaction"},
                     "extra_info": {"split": split, "index": index, "item_id": entry["item_id"],
                                    "interaction_kwargs": {"name": task, "session_id": index}}})
        if num_samples and len(rows) >= num_samples:
            break
    if not rows:
        raise SystemExit(f"error: {item_id_file} holds no {task} item ids")
    return rows


def main(task: str, argv: list[str] | None = None) -> None:
    """CLI: write train.parquet and test.parquet for `task` (webshop | webarena)."""
    import pandas as pd

    parser = argparse.ArgumentParser(description=f"{task} item ids -> verl interaction parquet")
    parser.add_argument("--input_file", default=os.path.join(ROOT, "AgentItemId", f"{task}_train.json"))
    parser.add_argument("--test_file", default=os.path.join(ROOT, "AgentItemId", f"{task}_test.json"))
    parser.add_argument("--local_save_dir", required=True)
    parser.add_argument("--num_samples", type=int, default=None, help="keep only the first N rows of each split")
    parser.add_argument("--model_path", default=None,
                        help="the policy's HF dir: its family's system line (default: AgentGym-RL's Qwen line)")
    args = parser.parse_args(argv)
    system_prompt = DEFAULT_SYSTEM_PROMPT
    if args.model_path:
        from transformers import AutoTokenizer

        system_prompt = default_system_prompt(AutoTokenizer.from_pretrained(os.path.expanduser(args.model_path)))
    out = os.path.expanduser(args.local_save_dir)
    os.makedirs(out, exist_ok=True)
    for split, path in (("train", args.input_file), ("test", args.test_file)):
        rows = interaction_rows(path, task, split, args.num_samples, system_prompt)
        pd.DataFrame(rows).to_parquet(os.path.join(out, f"{split}.parquet"))
        print(f"{split}: {len(rows)} rows -> {os.path.join(out, split + '.parquet')}")
