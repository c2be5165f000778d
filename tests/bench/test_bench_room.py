"""``bench room``'s scene and scoring: the stretches are where the voices are, at the levels
the scene promises, and an answer is credited to what it answered."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.room import ROOMS, TV_RMS_DB, USER_RMS_DB, Scene, Speech, build_scene, score


def test_the_scene_places_each_voice_where_its_stretch_says(tmp_path: Path) -> None:
    scene = build_scene(ROOMS[0], Speech(tmp_path))
    kinds = [kind for kind, _s, _e in scene.stretches]
    assert kinds == ["others", "user:0", "tv", "tv+user", "user:1", "addressed", "user:2"]
    assert scene.audio.size / 16_000 > 40

    def rms_db(start: float, end: float) -> float:
        part = scene.audio[int(start * 16_000):int(end * 16_000)]
        return 20 * float(np.log10(np.sqrt(np.mean(np.square(part)))))

    stretches = {kind: (start, end) for kind, start, end in scene.stretches}
    assert abs(rms_db(*stretches["user:0"]) - USER_RMS_DB) < 0.5
    first_tv = scene.stretches[2]
    assert abs(rms_db(first_tv[1], first_tv[2]) - TV_RMS_DB) < 2.0  # pauses between lines
    user_over_tv = stretches["user:1"]
    assert rms_db(*user_over_tv) > TV_RMS_DB + 8  # the user stands out from the television
    quiet = rms_db(stretches["user:0"][1] + 1.0, stretches["user:0"][1] + 3.0)
    assert quiet < -50


def test_answers_are_credited_to_what_they_answered() -> None:
    scene = Scene(np.zeros(16_000 * 60, np.float32), [
        ("others", 1.0, 10.0), ("user:0", 13.0, 14.5), ("tv", 18.0, 30.0), ("tv+user", 33.0, 45.0),
        ("user:1", 36.0, 38.0), ("addressed", 49.0, 51.0), ("user:2", 55.0, 56.5)])
    answered = [
        (1.2, "did you remember to feed the cat this morning?", 3.5),  # the flatmates, answered
        (13.0, "what time is it right now?", 15.2),
        (33.0, "officials say... could you give me a recipe for pancakes?", 46.0),  # merged
        (49.0, "kai, what is the weather like tomorrow?", 52.0),
    ]
    report = score(scene, answered)
    assert report["requests"] == {"What time is it right now?": 0.7,
                                  "Could you give me a recipe for pancakes?": 8.0,
                                  "Tell me a joke about penguins.": None}
    assert [bool(s["answered"]) for s in report["not_addressed"]] == [True, False, False]  # type: ignore[index, union-attr]
    assert report["addressed_answered"] is True
