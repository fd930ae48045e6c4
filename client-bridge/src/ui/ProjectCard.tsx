// A project's card: its title and status, the plan, every task with its owner and status
// (ticking off as the fairies finish), who waits on what, and the steering buttons (abort
// while it runs, undo all of it). A click on a task or a fairy flies this tab's camera there.
import { useState } from 'react'
import type { FairyPresence, ProjectState, ProjectTaskState } from '../protocol.gen'
import type { StewardHandle } from '../steward'
import { cssColor } from './FairyOverlay'
import { modeLabel } from './modes'
import { projectStatusLabel } from './statuses'

const MARK: Record<ProjectTaskState['status'], string> = { todo: '○', 'in-progress': '➜', done: '✔' }

export function ProjectCard({ project, handle, fairies }: { project: ProjectState; handle: StewardHandle; fairies: FairyPresence[] }) {
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const byId = Object.fromEntries(fairies.map((f) => [f.id, f]))
  const tasks = project.tasks ?? []
  const done = tasks.filter((t) => t.status === 'done').length
  const steer = async (act: () => Promise<{ error?: string | null }>) => {
    setBusy(true)
    setError(null)
    const reply = await act()
    setBusy(false)
    if (reply.error) setError(reply.error)
  }
  const fairy = (id: string | null | undefined) => {
    if (!id) return <span className="owner none">unassigned</span>
    const f = byId[id]
    return (
      <button
        type="button"
        className="owner"
        data-testid="project-owner"
        title={f ? `Fly to ${f.name}` : `${id}, no longer in the crew`}
        style={{ borderColor: f ? cssColor(f.color) : undefined }}
        onClick={() => f && handle.flyTo(f)}
      >
        {f?.name ?? 'a dismissed fairy'}
      </button>
    )
  }
  return (
    <div className="project-card" data-testid="project-card" data-project={project.projectId} data-state={project.status}>
      <div className="project-head">
        <b>{project.title}</b>
        <span className={`project-status project-${project.status}`} data-testid="project-status">
          {projectStatusLabel(project.status)} · {done}/{tasks.length}
        </span>
      </div>
      <div className="project-lead">led by {fairy(project.lead)}</div>
      {project.plan && (
        <details className="project-plan">
          <summary>plan</summary>
          {project.plan}
        </details>
      )}
      <ul className="project-tasks">
        {tasks.map((t) => (
          <li key={t.id} data-testid="project-task" data-task={t.id} data-status={t.status} data-owner={t.owner ?? ''}>
            <span className="todo-mark">{MARK[t.status]}</span>{' '}
            <button type="button" className="task-title" disabled={!t.area} title="Fly to this task's area" onClick={() => handle.flyTo(t)}>
              {t.title}
            </button>{' '}
            {fairy(t.owner)}
          </li>
        ))}
      </ul>
      {(project.waits ?? []).length > 0 && (
        <ul className="project-waits" data-testid="project-waits">
          {(project.waits ?? []).map((w) => (
            <li key={`${w.fairy}:${w.task ?? ''}:${w.onFairy ?? ''}`}>
              {byId[w.fairy]?.name ?? 'a dismissed fairy'} waits on{' '}
              {w.task ? (tasks.find((t) => t.id === w.task)?.title ?? w.task) : `${byId[w.onFairy ?? '']?.name ?? 'a dismissed fairy'}${w.mode ? ` (${modeLabel(w.mode)})` : ''}`}
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        {project.status === 'active' && (
          <button type="button" data-testid="project-abort" disabled={busy} title="Stop this project now, for everyone" onClick={() => void steer(() => handle.abort(project.projectId))}>
            abort
          </button>
        )}
        <button type="button" data-testid="project-undo" disabled={busy} title="Take back everything this project drew, as one undo" onClick={() => void steer(() => handle.revertProject(project.projectId))}>
          undo project
        </button>
      </div>
      {error && (
        <div className="steward-error" role="alert" data-testid="project-error">
          {error}
        </div>
      )}
    </div>
  )
}
