import assert from 'node:assert/strict'

// A tab's shapes and bindings as canonical JSON (sorted records, sorted keys): two tabs with
// the same canvas give the same string. Shared by the e2e tests and the latency bench.
export const snapshot = (tab) =>
  tab.page.evaluate(() => {
    const recs = window.__steward.editor.store
      .allRecords()
      .filter((r) => r.typeName === 'shape' || r.typeName === 'binding')
      .sort((a, b) => (a.id < b.id ? -1 : 1))
    const stable = (v) =>
      Array.isArray(v) ? v.map(stable) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, stable(v[k])])) : v
    return JSON.stringify(recs.map(stable))
  })

/**
 * Every tab's canvas agrees, record by record, with the mirror the steward rebuilds from its
 * durable outbox (stack.py `POST /e2e/agrees`, the parity rules), within `waitMs`; returns
 * how many shapes that mirror holds. The page reads `window.__steward.page()` (readPage).
 */
export async function matchesOutbox(agreesUrl, tabs, label, waitMs = 30_000) {
  const deadline = Date.now() + waitMs
  let answers = []
  while (Date.now() < deadline) {
    answers = await Promise.all(
      tabs.map(async (tab) => {
        const page = await tab.page.evaluate(() => window.__steward.page())
        const res = await fetch(agreesUrl, { method: 'POST', body: JSON.stringify({ page }) })
        assert.equal(res.status, 200)
        return [tab.name ?? tab.identity, await res.json()]
      }),
    )
    if (answers.every(([, a]) => a.problems.length === 0)) return answers[0][1].shapes
    await new Promise((r) => setTimeout(r, 250))
  }
  const shown = answers.filter(([, a]) => a.problems.length).map(([n, a]) => `${n}: ${a.problems.slice(0, 4).join('; ')}`)
  assert.fail(`${label}: tabs differ from the outbox mirror\n${shown.join('\n')}`)
}
