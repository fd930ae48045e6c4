"""The fairy board's side of the fairy actions: the operations their specs' effects call."""
