"""The canvas model: shape tiers, the per-room mirror, geometry and coordinates (pure logic)."""
