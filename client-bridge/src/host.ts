// Which browser is the host: the steward elects the earliest-joined browser that can answer
// context requests (lowest identity on ties). The steward may announce its choice in its
// participant attribute `steward.host`; without it every browser computes the same rule.
import type { Participant, Room } from 'livekit-client'
import { ATTR_CAPABILITIES } from './protocol.gen'

export const ATTR_HOST = 'steward.host'

export function hasCapability(p: Participant, cap: string): boolean {
  return (p.attributes[ATTR_CAPABILITIES] ?? '').split(',').map((c) => c.trim()).includes(cap)
}

export function electHost(room: Room, stewardIdentity: string): string | null {
  const steward = room.remoteParticipants.get(stewardIdentity)
  const announced = steward?.attributes[ATTR_HOST]
  if (announced) return announced
  const members: Participant[] = [room.localParticipant, ...room.remoteParticipants.values()]
  const capable = members.filter((p) => p.identity !== stewardIdentity && hasCapability(p, 'context'))
  if (capable.length === 0) return null
  capable.sort((a, b) => {
    const ja = a.joinedAt?.getTime() ?? Number.MAX_SAFE_INTEGER
    const jb = b.joinedAt?.getTime() ?? Number.MAX_SAFE_INTEGER
    return ja - jb || (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0)
  })
  return capable[0]!.identity
}
