"""Canvas Steward: a LiveKit participant that runs AI fairies on a shared tldraw canvas."""

import warnings

# pgserver's platformdirs warns on every import in containers without a login session.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

__version__ = "0.1.0"
