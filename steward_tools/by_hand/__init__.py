"""A model by hand: a local Messages API server that parks each request as readable files and
streams back the answer a person writes (`steward by-hand`, docs/MODEL-BY-HAND.md)."""
