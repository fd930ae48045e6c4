"""Prompt parts (one module each, priority-ordered), the system prompt and response schema."""
