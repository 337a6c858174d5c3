"""A tiny, randomly initialised chat model built on the spot: no download, no GPU.

Tests, benchmarks and the offline quickstart need a real model that vLLM's CPU backend,
transformers and TRL all load like any other: a Qwen2-architecture causal LM (the family
most RL recipes start from) with a ChatML chat template, and a byte-level BPE tokenizer
trained in a second on text like the envs' own. It knows nothing; it generates real
tokens through the real stacks, which is what the machinery needs to be tested on.

    path = build_tiny_model("/tmp/tiny")       # a folder for from_pretrained / vllm.LLM
"""

from __future__ import annotations

import json
from pathlib import Path

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
DEFAULT_VOCAB_SIZE = 1024
HEAD_DIM = 64
"""vLLM's CPU attention kernels reject head sizes below 64."""

_CORPUS = (
    "What is 7 + 9? The answer is \\boxed{16}. Solve for x: 3x + 4 = 19. "
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "def add(a, b):\n    return a + b\n```python\nprint(6 * 7)\n```\n```output\n42\n``` "
    "Reason step by step, then give the final answer as \\boxed{N}. #### 72 "
    "<calculator>7 + 9</calculator> <result>16</result> <error>division by zero</error> "
    "0 1 2 3 4 5 6 7 8 9 10 11 12 + - * / = ( ) [ ] { } , . : ; ? ! "
)


def build_tiny_model(
    path: str | Path,
    *,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    hidden_size: int = 128,
    layers: int = 2,
    seed: int = 0,
) -> Path:
    """Write a tiny Qwen2 chat model and its tokenizer to `path`; return the path.

    `hidden_size` must be a multiple of 64 (the head size). Same arguments, same weights."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    if hidden_size % HEAD_DIM:
        raise ValueError(f"hidden_size must be a multiple of {HEAD_DIM} (vLLM's smallest head size), got {hidden_size}")
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator([_CORPUS] * 8, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tokenizer.chat_template = CHATML_TEMPLATE
    tokenizer.save_pretrained(path)

    torch.manual_seed(seed)
    # head_dim and torch_dtype reach PretrainedConfig through **kwargs, which its type hints do not show
    config = Qwen2Config(  # type: ignore[call-arg]
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=hidden_size // HEAD_DIM,
        num_key_value_heads=hidden_size // HEAD_DIM,
        head_dim=HEAD_DIM,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        torch_dtype="float32",
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    (path / "rlenvs_tiny.json").write_text(json.dumps({"seed": seed, "vocab_size": vocab_size}))
    return path
