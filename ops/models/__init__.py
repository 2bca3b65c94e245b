"""Model files: loading a folder, a GGUF or the bundled model (and the prepared cache), the tokenizer, a tiny MoE."""
