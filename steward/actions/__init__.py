"""The model's action vocabulary: one module per family, a registry, sanitize and resolve."""
