"""Fairies: whatever plans and acts on a prompt; they reach the room only through `ports`."""
