"""Topic and RPC method names: the only place they are spelled."""

from typing import Final

PROTOCOL_VERSION: Final = "tldraw-actions/1"

TOPIC_ACTION: Final = "agent:action"
# Several envelopes in one packet (`EnvelopeBatch`): one LiveKit packet per room per flush.
TOPIC_ACTIONS: Final = "agent:actions"
TOPIC_ACK: Final = "agent:ack"
TOPIC_SCREENSHOT: Final = "agent:screenshot"
TOPIC_CONTEXT: Final = "agent:context"
TOPIC_VIEWPORT: Final = "canvas:viewport"
TOPIC_RESYNC: Final = "steward:resync"
# browser → steward: a user is typing (or speaking) a prompt; the steward may prefetch context.
TOPIC_COMPOSING: Final = "steward:composing"
TOPIC_CHAT: Final = "agent:chat"
TOPIC_STATUS: Final = "agent:status"
# steward → browsers: a run started for this prompt, asked by this participant.
TOPIC_PROMPT: Final = "agent:prompt"
# steward → browsers: a run's thought (`ThoughtMessage`), numbered in the conversation.
TOPIC_THOUGHT: Final = "agent:thought"
TOPIC_EDIT: Final = "canvas:edit"
TOPIC_FAIRIES: Final = "agent:fairies"
# steward → browsers: a project's state (`ProjectState`), on change and to a joining tab.
TOPIC_PROJECT: Final = "agent:project"
TOPIC_TRANSCRIPTION: Final = "lk.transcription"
# LiveKit's chat (its components' `useChat`, the agents playground): text streams, one per
# message. Prompts arrive on it as on `steward.prompt`; the agent's chat goes out on it too.
TOPIC_LK_CHAT: Final = "lk.chat"

RPC_CONTEXT: Final = "steward.context"
RPC_PROMPT: Final = "steward.prompt"
RPC_CANCEL: Final = "steward.cancel"
RPC_REVERT: Final = "steward.revert"
# The room's conversation so far, for a tab that loads or joins (`ConversationRequest`).
RPC_CONVERSATION: Final = "steward.conversation"
# The room's crew: summon, rename and dismiss a fairy (`steward.room.inbound.crew`).
RPC_SUMMON: Final = "steward.summon"
RPC_RENAME: Final = "steward.rename"
RPC_DISMISS: Final = "steward.dismiss"
# Steering a project: end it now, or take back all its runs as one revert.
RPC_ABORT: Final = "steward.abort"
RPC_REVERT_PROJECT: Final = "steward.revert_project"

# Participant attributes a browser sets to announce what it can do.
ATTR_CAPABILITIES: Final = "steward.capabilities"  # comma list: context,screenshot,apply
ATTR_CAN_PROMPT: Final = "steward.can_prompt"  # "true" when the app grants prompting
ATTR_ROLE: Final = "steward.role"  # "browser" | "voice" | "steward"
# Set (to the time in ms) right after connecting: attribute changes are announced by the SFU
# at once, while joins of non-publishing participants are batched for up to 3 s.
ATTR_READY: Final = "steward.ready"
# The steward's own state as LiveKit's frontends read an agent's: idle, listening, thinking.
ATTR_AGENT_STATE: Final = "lk.agent.state"
# Media types of the `agent:screenshot` stream (its mimeType says which one it carries).
SCREENSHOT_TYPE_JPEG: Final = "image/jpeg"
SCREENSHOT_TYPE_WEBP: Final = "image/webp"
# Media types of the `agent:context` shapes stream: gzip-compressed JSON (browsers and headless
# clients send this) or plain JSON; the steward inflates gzip with a cap on the inflated size.
SHAPES_TYPE_JSON: Final = "application/json"
SHAPES_TYPE_GZIP: Final = "application/gzip"
# Byte-stream attribute correlating a stream with its context request.
STREAM_ATTR_REQUEST_ID: Final = "requestId"
# `steward:resync` with this sessionId replays every session of the room in room order:
# lastSeq 0 = everything (a fresh client); lastSeq >= 1 = only what the sender has not acked
# (a client that kept its canvas across a reconnect).
RESYNC_ALL_SESSIONS: Final = "*"

# Every topic the steward speaks: a stream on one of them is either expected or refused.
STEWARD_TOPICS: Final = (
    TOPIC_ACTION,
    TOPIC_ACTIONS,
    TOPIC_ACK,
    TOPIC_SCREENSHOT,
    TOPIC_CONTEXT,
    TOPIC_VIEWPORT,
    TOPIC_RESYNC,
    TOPIC_COMPOSING,
    TOPIC_CHAT,
    TOPIC_STATUS,
    TOPIC_THOUGHT,
    TOPIC_EDIT,
    TOPIC_FAIRIES,
    TOPIC_PROJECT,
    TOPIC_TRANSCRIPTION,
)
