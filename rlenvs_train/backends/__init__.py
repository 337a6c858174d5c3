"""Generation backends behind one interface (`base.Backend`): hf, vllm, vllm-server."""
