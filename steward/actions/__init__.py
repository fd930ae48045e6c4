"""The model's action vocabulary: one package per family, one module per action, a registry,
sanitize and resolve."""
