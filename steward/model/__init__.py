"""Model providers (scripted, anthropic, replay) and the incremental action parser."""
