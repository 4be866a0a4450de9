"""KV-press presets, one file each; importing this package registers every preset."""

from compressbench.compress.presses import chunkkv, pyramidkv, snapkv, streamingllm

__all__ = ["chunkkv", "pyramidkv", "snapkv", "streamingllm"]
