"""Generation backends behind one interface (`base.Backend`): hf, vllm, vllm-server; `kinds`
names them and builds each where the trainer or `evaluate` needs it."""
