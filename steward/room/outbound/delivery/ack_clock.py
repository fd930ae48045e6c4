"""A participant's ack round trip and the retransmit timeout it gives.

The round trip is smoothed as TCP does (RFC 6298), from envelopes acked without a retransmit;
and, as Karn's algorithm does, the timeout stays doubled after a retransmit until such an ack
comes. Without that, a peer whose acks merely lag gets every new envelope retransmitted (so
none is ever timed and the timeout never grows): a loaded client process turned 1.6 thousand
envelopes into 10 thousand resends.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_BACKOFF_S = 5.0
MAX_DOUBLINGS = 6  # past MAX_BACKOFF_S from any floor above 0.08 s


def backed_off(timeout: float, attempts: int) -> float:
    """The wait before retransmit number `attempts + 1`: doubled per attempt, capped."""
    return min(MAX_BACKOFF_S, timeout * float(2**attempts))


@dataclass
class AckClock:
    """One participant's smoothed ack round trip and backoff, from which its retransmit timeout
    follows."""

    srtt: float | None = None
    rttvar: float = 0.0
    last_ack_at: float = 0.0
    backoff: int = 0  # doublings since the last timed ack

    def sample(self, rtt: float) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        self.backoff = 0

    def timed_out(self) -> None:
        """A retransmit went to this participant: wait longer for the next envelope too."""
        self.backoff = min(self.backoff + 1, MAX_DOUBLINGS)

    def timeout(self, floor: float) -> float:
        base = floor if self.srtt is None else max(floor, self.srtt + 4 * self.rttvar)
        return min(MAX_BACKOFF_S, base * float(2**self.backoff))
