"""The TensorBoard "GPU Advisor" tab: the only package that imports tensorboard."""
