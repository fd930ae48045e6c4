"""Size and rate limits shared by the steward and the browsers."""

from typing import Final

# One action envelope on `agent:action`; larger content is split across envelopes.
MAX_ENVELOPE_BYTES: Final = 15 * 1024
# One `agent:actions` packet (an `EnvelopeBatch`): within LiveKit's recommended reliable size;
# an envelope that would not fit beside others goes alone on `agent:action`.
MAX_BATCH_BYTES: Final = 15 * 1024
# Envelopes in one batch (a bound for decoders; the byte limit binds first in practice).
MAX_ENVELOPES_PER_BATCH: Final = 256
# LiveKit's hard cap for one data packet (livekit rtc 1.x).
MAX_DATA_PACKET_BYTES: Final = 64_000
# RPC v1 payload cap; larger context parts travel as byte streams.
MAX_RPC_PAYLOAD_BYTES: Final = 15_360
MAX_PROMPT_CHARS: Final = 8_000
MAX_ID_CHARS: Final = 128
MAX_ACTIONS_PER_ENVELOPE: Final = 200
MAX_EDIT_RECORDS: Final = 500
# Geometry's bounds (steward.canvas.guard): page coordinates, offsets and angles within
# ±MAX_COORD, sizes within 0..MAX_SIZE, so no sum or product overflows to inf and NaN.
MAX_COORD: Final = 1e7
MAX_SIZE: Final = 1e6
# Action ids one cumulative ack lists; a client starts another ack past it.
MAX_ACKED_IDS: Final = 100
# Clients hold an ack at most this long, then send one cumulative ack per session for all
# they applied meanwhile (delayed acks); the steward's retransmit timeout must exceed it.
ACK_DELAY_MS: Final = 40
MAX_SCREENSHOT_BYTES: Final = 4 * 1024 * 1024
MAX_SHAPES_JSON_BYTES: Final = 8 * 1024 * 1024
# Long edge (px) of the screenshot when the steward names no `maxSize` (the seed's thumbnail).
DEFAULT_SCREENSHOT_MAX_SIZE: Final = 800
# Encoded screenshot size browsers aim under when the steward names no `maxBytes`: the byte
# stream through LiveKit's data channel (~1-2 MB/s) is the warm screenshot's long pole.
DEFAULT_SCREENSHOT_MAX_BYTES: Final = 64_000
# Smallest `maxBytes` a steward may ask for (below it nothing legible fits anyway).
MIN_SCREENSHOT_MAX_BYTES: Final = 1_000
# Browsers send `steward:composing` at most this often while a user composes a prompt.
COMPOSING_MIN_INTERVAL_MS: Final = 2000
# Browsers publish viewport/selection at most this often.
VIEWPORT_MIN_INTERVAL_MS: Final = 80
MAX_FAIRIES_PER_ROOM: Final = 10
# A fairy's name and personality, as people choose them (`steward.summon`, `steward.rename`).
MAX_FAIRY_NAME_CHARS: Final = 32
MAX_PERSONALITY_CHARS: Final = 400
# A project's state (`agent:project`) fits one packet: its title and each task's, its plan
# (cut with an ellipsis past it) and its tasks.
MAX_TITLE_CHARS: Final = 120
MAX_PLAN_CHARS: Final = 2_000
MAX_PROJECT_TASKS: Final = 40
