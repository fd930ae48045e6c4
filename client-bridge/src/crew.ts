// The room's crew and its projects, as a tab directs and sees them: summon, rename and
// dismiss a fairy (the steward checks who may), each project's state as the steward publishes
// it (`agent:project`), abort a project or undo all of it, and this tab's camera flown to a
// task or a fairy, or kept on one (follow).
import {
  RPC_ABORT,
  RPC_DISMISS,
  RPC_RENAME,
  RPC_REVERT_PROJECT,
  RPC_SUMMON,
  type AbortReply,
  type Box,
  type CrewReply,
  type FairyPresence,
  type ProjectState,
  type RevertReply,
  type SummonRequest,
} from './protocol.gen'

/** Projects a tab keeps (the newest; each is replaced by its next state). */
export const MAX_PROJECTS = 50

export type Rpc = <T>(method: string, payload: unknown) => Promise<T>

/** What a tab may ask of the crew and its projects (methods of the steward handle). */
export interface CrewApi {
  /** A new fairy joins the room's crew (up to the room's limit); the reply names it. */
  summon(request: SummonRequest): Promise<CrewReply>
  rename(fairyId: string, name: string): Promise<CrewReply>
  /** The fairy leaves the crew; whatever it was doing ends as a cancel. */
  dismiss(fairyId: string): Promise<CrewReply>
  /** Ends project `projectId` now (who asked for it, or a moderator): drones stop, nothing
   * half drawn stays, the lead says it ended. */
  abort(projectId: string): Promise<AbortReply>
  /** Takes back every run of project `projectId` as one revert (aborting it first). */
  revertProject(projectId: string): Promise<RevertReply>
}

export function crewApi(rpc: Rpc): CrewApi {
  return {
    summon: (request) => rpc<CrewReply>(RPC_SUMMON, request),
    rename: (fairyId, name) => rpc<CrewReply>(RPC_RENAME, { fairyId, name }),
    dismiss: (fairyId) => rpc<CrewReply>(RPC_DISMISS, { fairyId }),
    abort: async (projectId) => {
      const reply = await rpc<Partial<AbortReply>>(RPC_ABORT, { projectId })
      return { ok: reply.ok === true, error: reply.error ?? null }
    },
    revertProject: (projectId) => rpc<RevertReply>(RPC_REVERT_PROJECT, { projectId }),
  }
}

function isProjectState(msg: unknown): msg is ProjectState {
  const m = msg as Partial<ProjectState> | null
  return !!m && typeof m.projectId === 'string' && typeof m.title === 'string' && typeof m.status === 'string' && typeof m.ts === 'number'
}

/** The tab's projects after `msg` (a project's newer state replaces its older one and keeps
 * its place; an older state arriving late is dropped). */
export function withProject(projects: ProjectState[], msg: unknown): ProjectState[] {
  if (!isProjectState(msg)) return projects
  const i = projects.findIndex((p) => p.projectId === msg.projectId)
  if (i < 0) return [...projects, msg].slice(-MAX_PROJECTS)
  if (projects[i]!.ts > msg.ts) return projects
  return projects.map((p, j) => (j === i ? msg : p))
}

/** The box a click on a task or a fairy flies the camera to: the task's area, or a fairy's
 * task area, else a small box around the fairy. */
export function focusBox(target: { area?: Box | null } | FairyPresence): Box | null {
  if ('position' in target) {
    if (target.taskBounds) return target.taskBounds
    return { x: target.position.x - 200, y: target.position.y - 150, w: 400, h: 300 }
  }
  return target.area ?? null
}
