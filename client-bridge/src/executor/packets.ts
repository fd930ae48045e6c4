import { TOPIC_ACTION, TOPIC_ACTIONS } from '../protocol.gen'
import type { ActionEnvelope, EnvelopeBatch } from '../protocol.gen'

const isEnvelope = (e: unknown): e is ActionEnvelope => {
  const env = e as ActionEnvelope | null
  return !!env && typeof env.sessionId === 'string' && typeof env.seq === 'number' && Array.isArray(env.actions)
}

/**
 * The envelopes one steward packet carries, in send order: one on `agent:action`, several
 * (an `EnvelopeBatch`) on `agent:actions`. Each is then handled, and acked, on its own.
 * Null when the packet is not what its topic says (nothing of it is applied).
 */
export function envelopesIn(topic: string, body: unknown): ActionEnvelope[] | null {
  if (topic === TOPIC_ACTION) return isEnvelope(body) ? [body] : null
  if (topic !== TOPIC_ACTIONS) return null
  const envelopes = (body as EnvelopeBatch | null)?.envelopes
  if (!Array.isArray(envelopes) || envelopes.length === 0 || !envelopes.every(isEnvelope)) return null
  return envelopes
}
