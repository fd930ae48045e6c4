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
