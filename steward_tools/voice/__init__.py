"""Speech for tests, the voice bench and the browser e2e: espeak-ng to WAV, and a WAV played
as a participant's microphone."""
