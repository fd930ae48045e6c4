"""The wire protocol: messages, the one rectangle type (`Box`), names, limits, decoding and
schema export.

Imports no other steward package.
"""

from steward.protocol.codec import decode as decode
from steward.protocol.errors import ProtocolError as ProtocolError
from steward.protocol.limits import *  # noqa: F403
from steward.protocol.messages import *  # noqa: F403
from steward.protocol.names import *  # noqa: F403
