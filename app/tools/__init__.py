"""The companion's tools: what a tool is (``spec``), the built-in ones, the model's own call
formats (``gemma4``, ``openai_format``) and the rule-based requests (``intents``).

A pure layer beside ``app.core``: the standard library only, so the turn machine's stream
and the stores in ``app.storage`` can both use its types. What a tool stores goes through
a small Protocol (``ReminderBook``, ``NoteBook``) that ``app.storage`` implements.
"""
