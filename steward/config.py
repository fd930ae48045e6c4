"""One settings object for every environment variable the steward reads."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from steward.protocol.limits import (
    ACK_DELAY_MS,
    DEFAULT_SCREENSHOT_MAX_BYTES,
    DEFAULT_SCREENSHOT_MAX_SIZE,
    MAX_FAIRIES_PER_ROOM,
    MAX_SCREENSHOT_BYTES,
    MIN_SCREENSHOT_MAX_BYTES,
)

# Who a model call is for: the one-shot agent (and solo fairies), a project's orchestrator,
# a duo's lead, or a drone working a task. Each may use its own model (`model_for_role`).
ModelRole = Literal["one-shot", "orchestrator", "duo", "drone"]
MODEL_ROLES: tuple[ModelRole, ...] = ("one-shot", "orchestrator", "duo", "drone")

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _default_data_dir() -> Path:
    """A checkout keeps its data in `.data` beside the code; an installed steward (its code in
    site-packages) in `.data` under the directory it is started in."""
    if (PROJECT_ROOT / "pyproject.toml").is_file():
        return PROJECT_ROOT / ".data"
    return Path.cwd() / ".data"


# Long enough that PyJWT does not warn about short HMAC keys.
DEV_API_KEY = "devkey"
DEV_API_SECRET = "canvas-steward-dev-secret-0123456789abcdef"


class Settings(BaseSettings):
    """Environment variables are the field names upper-cased (no prefix)."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", case_sensitive=False)

    livekit_url: str = "ws://127.0.0.1:7880"
    livekit_api_key: str = DEV_API_KEY
    livekit_api_secret: SecretStr = SecretStr(DEV_API_SECRET)

    # Empty means: start the embedded Postgres in `steward_data_dir`.
    database_url: str | None = None
    steward_data_dir: Path = Field(default_factory=_default_data_dir)

    steward_model: str = "scripted"
    # Per-role models; unset (or empty) falls back to `steward_model`.
    steward_model_one_shot: str | None = None
    steward_model_orchestrator: str | None = None
    steward_model_duo: str | None = None
    steward_model_drone: str | None = None
    # Sampling temperature sent to providers that take one (the kit uses 0: the same canvas
    # and request give the same drawing); `none` sends no temperature (the provider default).
    steward_model_temperature: float | None = Field(default=0.0, ge=0.0, le=1.0)
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None
    # Tokens per second the scripted model streams at.
    steward_scripted_tokens_per_s: float = Field(default=400.0, gt=0)

    steward_identity: str = "canvas-steward"
    steward_agent_name: str = "canvas-steward"
    # `steward worker`: rooms one worker serves before LiveKit dispatches elsewhere (25:
    # where one process still completes every run here, see docs/PERFORMANCE.md).
    steward_worker_max_rooms: int = Field(default=25, ge=1)
    steward_worker_idle_processes: int = Field(default=0, ge=0)
    # `steward worker`: each room's service opens two Postgres pools of at most this many
    # connections, so a full worker needs up to 2 × this × max rooms + 5 (docs/DEPLOY.md).
    steward_worker_room_pool_size: int = Field(default=3, ge=1, le=20)
    # A room's lease (docs/DEPLOY.md): renewed every third of it; a steward silent this long
    # loses its rooms to another worker. Short: it bounds how long a dead worker's room waits.
    steward_lease_seconds: float = Field(default=6.0, gt=0.2)
    # SIGTERM: running sessions get this long to finish before the rooms are released.
    steward_drain_seconds: float = Field(default=30.0, ge=0)
    # HTTP runs for a room this process does not serve wait in Postgres this long for the
    # room's steward (then they read `expired`); its steward looks for them this often.
    steward_queued_run_seconds: float = Field(default=120.0, gt=0)
    steward_queue_poll_seconds: float = Field(default=1.0, gt=0)
    # Finished and expired queued runs are deleted this long after they were queued (their
    # caller reads the state until then; the session itself stays in agent_sessions).
    steward_queued_run_retention_seconds: float = Field(default=86_400.0, gt=0)
    steward_http_host: str = "127.0.0.1"
    steward_http_port: int = Field(default=8787, ge=0, le=65535)
    # Required by POST /api/canvas-agent/run; empty disables the endpoint.
    steward_api_key: SecretStr | None = None
    steward_wake_phrase: str = "steward"
    # Voice: which engine transcribes microphones (`steward/voice/engines.py`), what it does
    # with people who may not prompt (caption them, or not listen at all), and the silence
    # that ends an utterance (the floor of end-of-speech → prompt latency).
    steward_stt: Literal["off", "local", "openai"] = "local"
    steward_stt_unprivileged: Literal["captions", "ignore"] = "captions"
    # Agents (LiveKit participants of kind `agent`) whose `lk.transcription` captions of
    # another participant's track count as that participant's words (comma list of
    # identities). Anyone else's caption speaks only for its sender.
    steward_caption_agents: str = ""
    steward_vad_min_silence_s: float = Field(default=0.4, ge=0.1, le=3.0)
    steward_openai_stt_model: str = "gpt-4o-mini-transcribe"
    # OpenAI's API, or any server speaking it (`openai:<model>` models and the `openai` speech
    # engine): the base URL ends in `/v1`, unset is OpenAI's. Local servers need no key.
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    # Dev only (`steward dev` turns these on): hand out room tokens to anyone who can reach
    # the HTTP port, joining the room on first request, and serve the built demo page.
    steward_dev_tokens: bool = False
    steward_demo_dir: Path | None = None
    steward_apply_mode: Literal["relay", "host"] = "relay"
    steward_prompt_policy: Literal["attribute", "everyone"] = "attribute"
    # Keys of the `steward.can_prompt` grants (comma list): the first signs, each verifies,
    # so a key rotates by prepending the new one. Unset: the LiveKit API secret.
    steward_grant_secrets: SecretStr | None = None
    # Who may cancel a run: `owner` (who asked, or a moderator grant) or `everyone` (anyone
    # allowed to prompt).
    steward_cancel_policy: Literal["owner", "everyone"] = "owner"
    # Who may summon, rename and dismiss the room's fairies: `prompters` (anyone allowed to
    # prompt) or `moderators` (a moderator grant only).
    steward_crew_policy: Literal["prompters", "moderators"] = "prompters"
    # How many fairies a room's crew may have (summons past it are refused).
    steward_crew_limit: int = Field(default=6, ge=1, le=MAX_FAIRIES_PER_ROOM)
    # Models a caller (HTTP `model`) may pick, comma list; empty: only the configured ones
    # (`steward_model` and the role models).
    # `replay:` and anything naming a file is never accepted from a caller.
    steward_models_allowed: str = ""
    # Refusals per participant per minute (an unsolicited stream counts 10, or one per 16 KiB
    # it announces) before the steward revokes its data publishing through LiveKit
    # (steward.room.inbound.abuse).
    steward_abuse_strikes_per_min: int = Field(default=200, ge=1)
    # A muted identity that leaves and rejoins within this long is muted again.
    steward_abuse_mute_seconds: float = Field(default=600.0, ge=0)
    # What one participant may send the steward in 10 s, on any topic, streams included
    # (those it asked for count a packet, no bytes); past it every arrival is strikes, one
    # per 4 KiB (steward.room.inbound.budget).
    steward_inbound_budget_bytes: int = Field(default=2 * 1024 * 1024, ge=64 * 1024)
    steward_inbound_budget_packets: int = Field(default=2000, ge=100)
    # ... and in any 1 s: a flood passes this within a fraction of a second and is muted;
    # over it every arrival is strikes, one per KiB.
    steward_inbound_burst_bytes: int = Field(default=512 * 1024, ge=64 * 1024)
    # ... and of what the steward never reads (packets and streams on topics it does not
    # handle, an answer's bytes past its cap; 4 KiB more for opening a stream on a topic with
    # no handler) in any 1 s: over it, a strike per 128 bytes, so a stream flood spread over
    # senders, topics and streams is muted within about a second.
    steward_inbound_unread_burst_bytes: int = Field(default=32 * 1024, ge=4 * 1024)

    steward_max_followups: int = Field(default=3, ge=0, le=20)
    # A run with no progress (no model output, no context answer) for this long ends; a run
    # ends anyway after steward_session_max_s, progressing or not.
    steward_watchdog_s: float = Field(default=60.0, gt=0)
    steward_session_max_s: float = Field(default=600.0, gt=0)
    steward_context_timeout_s: float = Field(default=2.0, gt=0)
    # An envelope's outbox INSERT waits out a Postgres restart this long before the session
    # fails (the stream stalls meanwhile: nothing is published before it is persisted).
    steward_outbox_retry_s: float = Field(default=15.0, ge=0)
    # Long edge of the screenshot browsers send (px): detail the model can use, bytes the
    # data channel must carry before the model call can start. 800: the seed's thumbnail.
    steward_screenshot_max_size: int = Field(default=DEFAULT_SCREENSHOT_MAX_SIZE, ge=16, le=4096)
    # Byte budget of that screenshot: browsers lower quality, then scale (never under 320 px
    # long side), until it fits, so the byte stream (the warm fetch's long pole) stays short.
    steward_screenshot_max_bytes: int = Field(
        default=DEFAULT_SCREENSHOT_MAX_BYTES, ge=MIN_SCREENSHOT_MAX_BYTES, le=MAX_SCREENSHOT_BYTES
    )
    # Context prefetched on a `steward:composing` hint stays usable this long (any change to
    # the room's stream still invalidates it; host mode keeps the short 2 s cache instead).
    steward_prefetch_ttl_s: float = Field(default=15.0, ge=0)
    # At most one prefetch per room this often; more hints are dropped (counted).
    steward_prefetch_min_interval_s: float = Field(default=1.0, ge=0)
    # Above the clients' ack delay, or every held ack would look lost.
    steward_retransmit_after_ms: int = Field(default=400, gt=ACK_DELAY_MS)
    steward_retransmit_attempts: int = Field(default=3, ge=0)
    # An action's streamed previews, and a message's streamed text, at most this often (0:
    # every parser snapshot is sent).
    steward_preview_interval_ms: int = Field(default=200, ge=0)
    steward_blurry_shape_cap: int = Field(default=300, ge=0)
    steward_room_daily_budget_usd: float = Field(default=5.0, ge=0)
    steward_prompt_rate_per_min: int = Field(default=30, ge=1)
    # Items of a room's conversation (prompts, messages, thoughts, run statuses) kept for a
    # tab that reloads or joins late; older ones are deleted.
    steward_conversation_items: int = Field(default=200, ge=1, le=10_000)

    steward_log_format: Literal["auto", "json", "console"] = "auto"
    steward_log_level: Literal["debug", "info", "warning", "error"] = "info"
    # When true, logs include prompt text and image sizes/bytes instead of redacting them.
    steward_debug_payloads: bool = False
    # When true, the LiveKit SDK's native log records cross into Python logging (the SDK's
    # default, costly per packet); otherwise Rust writes those at RUST_LOG (warn) to stderr.
    steward_native_log_capture: bool = False

    def grant_keys(self) -> list[str]:
        """Verification keys of prompt grants, the signing key first."""
        raw = self.steward_grant_secrets.get_secret_value() if self.steward_grant_secrets else ""
        keys = [k.strip() for k in raw.split(",") if k.strip()]
        return keys or [self.livekit_api_secret.get_secret_value()]

    def caption_agents(self) -> frozenset[str]:
        return frozenset(a.strip() for a in self.steward_caption_agents.split(",") if a.strip())

    def models_allowed(self) -> frozenset[str]:
        """What a caller may pick: the list, plus every model the operator gave a role."""
        listed = {m.strip() for m in self.steward_models_allowed.split(",") if m.strip()}
        return frozenset(listed | {self.model_for_role(r) for r in MODEL_ROLES})

    @field_validator(
        "database_url",
        "steward_model_one_shot",
        "steward_model_orchestrator",
        "steward_model_duo",
        "steward_model_drone",
    )
    @classmethod
    def _empty_is_none(cls, v: str | None) -> str | None:
        return v or None

    @field_validator("steward_model_temperature", mode="before")
    @classmethod
    def _none_disables(cls, v: object) -> object:
        if v is None or (isinstance(v, str) and v.strip().lower() in ("", "none", "null")):
            return None
        return v

    def model_for_role(self, role: ModelRole) -> str:
        """The model spec a role runs on: its own setting, else `steward_model`."""
        own = {
            "one-shot": self.steward_model_one_shot,
            "orchestrator": self.steward_model_orchestrator,
            "duo": self.steward_model_duo,
            "drone": self.steward_model_drone,
        }[role]
        return own or self.steward_model


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
