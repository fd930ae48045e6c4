"""The fairy actions (family `fairy`): projects, tasks, waiting, flying, one module each.

They sit in the one action registry like every other action and never change the canvas (no
wire ops). Each action's module holds its schema, its section of the system prompt and its
spec; its effect checks the board's rules and asks the acting fairy to react, through the
fairy port (`steward/actions/fairy_port.py`, implemented by the fairy runtime). What the
solo, project and duo variants share sits in the modules named for it (`schemas`, `guides`,
`field_values`, `own_tasks`, `projects`, `spec`). Only the modes that list them offer them, so a
one-shot prompt never sees them.
"""
