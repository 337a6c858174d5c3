"""rlenvs_train: training LLMs on rlenvs environments with TRL's GRPOTrainer and vLLM.

Kept apart from `rlenvs` so that the environments never import torch.
"""
