// tldraw's fractional indices are jittered with Math.random in browsers, so two tabs that
// apply the same action would pick different index strings. While applying, Math.random is
// replaced by a PRNG seeded from the action, so every tab computes identical records.
function hash(text: string): number {
  let h = 2166136261
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 16777619)
  }
  return h >>> 0
}

function mulberry32(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function withSeededRandom<T>(seed: string, fn: () => T): T {
  const original = Math.random
  Math.random = mulberry32(hash(seed))
  try {
    return fn()
  } finally {
    Math.random = original
  }
}
