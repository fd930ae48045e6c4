"""Talking and planning: message, think, review, add-detail, update-todo-list, setMyView,
count, unknown (one module each)."""
