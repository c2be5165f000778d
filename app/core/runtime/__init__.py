"""The threaded part of the voice loop: wiring, the controller, and the job router.

``app.core.pipeline.VoicePipeline`` is the facade the app talks to; everything here is
what it is made of (see docs/architecture.md for the threads and messages).
"""
