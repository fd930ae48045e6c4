"""Making and changing shapes: create, update, delete, label, clear, pen (one module each)."""
