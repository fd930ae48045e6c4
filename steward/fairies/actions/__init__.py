"""The fairy actions: schemas and prompt text (`specs`), and their pure effects (`effects`)."""
