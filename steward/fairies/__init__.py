"""Fairies: the agent(s) that plan and act; they reach the room only through `ports`."""
