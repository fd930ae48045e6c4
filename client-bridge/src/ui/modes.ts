// What a person reads for a fairy's mode. The steward's mode names are the words its models
// and the protocol use ("orchestrating-active", "standing-by"); the panel and the overlay say
// what the fairy is doing in plain words, and keep the steward's name in the tooltip.
const PLAIN: Record<string, string> = {
  idling: 'free',
  sleeping: 'asleep',
  'one-shotting': 'drawing',
  soloing: 'working alone',
  'working-solo': 'drawing alone',
  'standing-by': 'done, waiting for its lead',
  'orchestrating-active': 'leading',
  'orchestrating-waiting': 'waiting on its crew',
  'duo-orchestrating-active': 'leading a duo',
  'duo-orchestrating-waiting': 'waiting on its partner',
  'working-drone': 'drawing',
  'working-orchestrator': 'drawing its own part',
}

/** A fairy's mode in plain words (an unknown mode reads as the steward named it). */
export const modeLabel = (mode: string): string => PLAIN[mode] ?? mode
