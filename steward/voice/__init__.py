"""The steward hears the room: speech to text, captions, wake phrase (see listener)."""
