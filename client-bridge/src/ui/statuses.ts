// What a person reads for a run's status and a project's. The protocol's words
// ("waiting_context", "calling_model") are the steward's; the panel says what is happening and
// keeps the protocol's word in `data-state` for scripts and tests.
import type { ProjectState, StatusMessage } from '../protocol.gen'

const RUN: Record<StatusMessage['status'], string> = {
  waiting_context: 'looking at the canvas',
  calling_model: 'thinking',
  streaming: 'drawing',
  scheduled: 'scheduled',
  done: 'done',
  canceled: 'stopped',
  error: 'failed',
}

const PROJECT: Record<ProjectState['status'], string> = { active: 'working', done: 'done', aborted: 'stopped' }

/** A run's status in plain words (an unknown one reads as the steward sent it). */
export const runStatusLabel = (status: string): string => RUN[status as StatusMessage['status']] ?? status

/** A project's status in plain words. */
export const projectStatusLabel = (status: string): string => PROJECT[status as ProjectState['status']] ?? status

/** A status's detail as people read it: the steward's "error: " prefix is said by the status. */
export const statusDetail = (detail?: string | null): string => (detail ?? '').replace(/^error: /, '')
