"""The tier choice against a table of simulated machines (a fake probe); the manifest tiers."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from app.gpu import Gpu
from app.models.catalog import default_manifest_path, load_catalog, parse_catalog
from app.models.errors import ModelError
from app.models.machine import LlamaBuild, measure
from app.models.tiers import CUDA_FIX, EXPERTS_NOT_YET, METAL_FIX, choose, machine_label
from app.storage.safe_read import load_toml

GIB = 1 << 30
MIB = 1 << 20
CUDA = LlamaBuild("0.3.36", "CUDA", True)
CUDA_MOE = LlamaBuild("0.4.0", "CUDA", True, experts_offload=True)
CPU = LlamaBuild("0.3.36", "CPU", False)
METAL = LlamaBuild("0.3.36", "Metal", True)


@dataclass
class FakeProbe:
    """A simulated machine for `measure`."""

    gpu_: Gpu | None = None
    llama_: LlamaBuild = CPU
    ram: int | None = 16 * GIB
    cores_: int = 8
    disk: int | None = 500 * GIB
    system_: str = "Simulated 1.0"

    def system(self) -> str:
        return self.system_

    def gpu(self) -> Gpu | None:
        return self.gpu_

    def llama(self) -> LlamaBuild:
        return self.llama_

    def ram_bytes(self) -> int | None:
        return self.ram

    def cores(self) -> int:
        return self.cores_

    def disk_free_bytes(self, path: Path) -> int | None:
        return self.disk


def card(name: str, gib: int, used_mib: int = 600) -> Gpu:
    total = gib * 1024 * MIB
    return Gpu(name, total, total - used_mib * MIB, used_mib * MIB)


MACHINES: list[tuple[str, FakeProbe, str]] = [
    ("RTX 4090 desktop", FakeProbe(card("NVIDIA GeForce RTX 4090", 24), CUDA, 64 * GIB, 24),
     "gpu-full"),
    ("RTX 3090, 32 GB", FakeProbe(card("NVIDIA GeForce RTX 3090", 24), CUDA, 31 * GIB, 16),
     "gpu-full"),
    ("RTX 3060 12 GB, today's binding", FakeProbe(card("NVIDIA GeForce RTX 3060", 12), CUDA,
                                                  31 * GIB, 12), "gpu-small"),
    ("RTX 3060 12 GB, binding with tensor overrides",
     FakeProbe(card("NVIDIA GeForce RTX 3060", 12), CUDA_MOE, 31 * GIB, 12), "gpu-experts-cpu"),
    ("RTX 4060 8 GB, 16 GB RAM, overrides", FakeProbe(card("NVIDIA GeForce RTX 4060", 8),
                                                      CUDA_MOE, 15 * GIB, 12), "gpu-small"),
    ("GTX 1650 4 GB, 16 GB RAM, 8 cores", FakeProbe(card("NVIDIA GeForce GTX 1650", 4), CUDA,
                                                    15 * GIB, 8), "cpu-medium"),
    ("RTX 3060 with a CPU-only binding, 32 GB, 16 cores",
     FakeProbe(card("NVIDIA GeForce RTX 3060", 12), CPU, 31 * GIB, 16), "cpu-large"),
    ("RTX 3070 8 GB, 32 GB RAM, today's binding",
     FakeProbe(card("NVIDIA GeForce RTX 3070", 8), CUDA, 31 * GIB, 16), "gpu-small"),
    ("GTX 1660 6 GB, 16 GB RAM, 12 threads",
     FakeProbe(card("NVIDIA GeForce GTX 1660 SUPER", 6), CUDA, 15 * GIB, 12), "cpu-medium"),
    ("workstation CPU, 64 GB, 16 cores", FakeProbe(None, CPU, 62 * GIB, 16), "cpu-large"),
    ("32 GB desktop, 8 threads", FakeProbe(None, CPU, 31 * GIB + 200 * MIB, 8), "cpu-large"),
    ("32 GB but 4 cores", FakeProbe(None, CPU, 31 * GIB, 4), "cpu-small"),
    ("16 GB laptop, 8 threads", FakeProbe(None, CPU, 15 * GIB + 300 * MIB, 8), "cpu-medium"),
    ("16 GB laptop, 4 threads", FakeProbe(None, CPU, 15 * GIB, 4), "cpu-small"),
    ("8 GB laptop", FakeProbe(None, CPU, 7 * GIB + 700 * MIB, 4), "cpu-small"),
    ("8 GB old laptop, 2 cores", FakeProbe(None, CPU, 7 * GIB + 500 * MIB, 2), "embedded"),
    ("4 GB netbook", FakeProbe(None, CPU, 4 * GIB, 2), "embedded"),
    ("RAM unknown", FakeProbe(None, CPU, None, 8), "embedded"),
    ("MacBook M2 16 GB (Metal)", FakeProbe(None, METAL, 16 * GIB, 8), "gpu-small"),
    ("Mac Studio 64 GB (Metal)", FakeProbe(None, METAL, 64 * GIB, 12), "gpu-full"),
    ("MacBook Air M1 8 GB (Metal)", FakeProbe(None, METAL, 8 * GIB, 8), "cpu-small"),
    ("4090 but a nearly full disk", FakeProbe(card("NVIDIA GeForce RTX 4090", 24), CUDA,
                                              64 * GIB, 24, disk=8 * GIB), "gpu-small"),
    ("16 GB laptop, disk full", FakeProbe(None, CPU, 15 * GIB, 8, disk=GIB // 2), "embedded"),
    ("no llama-cpp-python", FakeProbe(None, LlamaBuild(None, "missing", False), 15 * GIB, 8),
     "cpu-medium"),
]


@pytest.mark.parametrize(("probe", "tier"), [m[1:] for m in MACHINES],
                         ids=[m[0] for m in MACHINES])
def test_each_machine_gets_a_tier_that_fits(probe: FakeProbe, tier: str) -> None:
    catalog = load_catalog()
    facts = measure(probe, Path("/models"))
    rec = choose(catalog, facts)
    assert rec.tier.name == tier, rec.passed_over
    assert "\n" not in rec.reason and "first word" in rec.reason
    # every better tier was passed over for a stated reason
    order = list(catalog.tiers)
    assert [name for name, _ in rec.passed_over] == order[: order.index(tier)]
    assert all(why for _, why in rec.passed_over)


def test_the_issue_s_example_sentence() -> None:
    probe = FakeProbe(card("NVIDIA GeForce RTX 3060", 12), CUDA_MOE, 31 * GIB, 12)
    rec = choose(load_catalog(), measure(probe, Path("/m")))
    assert rec.reason == ("RTX 3060 12 GB: Gemma 4 26B A4B with experts on the CPU, "
                          "about 1 s to the first word")


def test_a_gpu_the_binding_cannot_use_is_said_with_the_fix() -> None:
    probe = FakeProbe(card("NVIDIA GeForce RTX 3060", 12), CPU, 31 * GIB, 16)
    rec = choose(load_catalog(), measure(probe, Path("/m")))
    assert rec.reason.startswith("31 GB RAM, 16 cores (RTX 3060 12 GB unused): ")
    assert len(rec.warnings) == 1 and "CPU-only build" in rec.warnings[0]
    assert CUDA_FIX in rec.warnings[0]


def test_a_mac_with_a_cpu_only_binding_is_told_the_metal_fix() -> None:
    probe = FakeProbe(None, CPU, 16 * GIB, 8)
    probe.system_ = "Darwin 24.1.0 (arm64)"
    rec = choose(load_catalog(), measure(probe, Path("/m")))
    assert rec.tier.name == "cpu-medium"
    assert len(rec.warnings) == 1 and METAL_FIX in rec.warnings[0]
    intel = FakeProbe(None, CPU, 16 * GIB, 8)
    intel.system_ = "Darwin 24.1.0 (x86_64)"
    assert choose(load_catalog(), measure(intel, Path("/m"))).warnings == ()


def test_a_machine_without_a_gpu_is_not_told_about_experts() -> None:
    """The reason for passing over the experts-in-RAM tier is the one the user can act on."""
    laptop = choose(load_catalog(), measure(FakeProbe(None, CPU, 15 * GIB, 8), Path("/m")))
    assert dict(laptop.passed_over)["gpu-experts-cpu"] == "no GPU the language model can use"
    probe = FakeProbe(card("NVIDIA GeForce RTX 3060", 12), CUDA, 31 * GIB, 12)
    gaming = choose(load_catalog(), measure(probe, Path("/m")))
    assert dict(gaming.passed_over)["gpu-experts-cpu"] == EXPERTS_NOT_YET
    assert "Hanasu" in EXPERTS_NOT_YET and "binding" not in EXPERTS_NOT_YET


def test_machine_labels() -> None:
    facts = measure(FakeProbe(None, CPU, 15 * GIB, 8), Path("/m"))
    assert machine_label(facts) == "15 GB RAM, 8 cores, no GPU"
    small = measure(FakeProbe(card("NVIDIA GeForce GTX 1650", 4), CUDA, 15 * GIB, 8), Path("/m"))
    assert machine_label(small) == "GTX 1650 4 GB"
    assert choose(load_catalog(), small).reason.startswith(
        "15 GB RAM, 8 cores (GTX 1650 4 GB: too small for these models): Gemma 4 E4B on the CPU")


def test_present_models_need_no_disk() -> None:
    catalog = load_catalog()
    facts = measure(FakeProbe(None, CPU, 15 * GIB, 8, disk=2 * GIB), Path("/m"))
    assert choose(catalog, facts).tier.name != "cpu-medium"
    have = {"llm.e4b", "asr.small", "tts.production"}
    rec = choose(catalog, facts, present=have)
    assert rec.tier.name == "cpu-medium" and rec.download_bytes == 0


def test_disk_shortage_is_in_the_reason() -> None:
    probe = FakeProbe(card("NVIDIA GeForce RTX 4090", 24), CUDA, 64 * GIB, 24, disk=8 * GIB)
    rec = choose(load_catalog(), measure(probe, Path("/m")))
    assert "of disk" in rec.reason


def test_download_size_of_a_tier() -> None:
    catalog = load_catalog()
    facts = measure(FakeProbe(card("NVIDIA GeForce RTX 4090", 24), CUDA, 64 * GIB, 24),
                    Path("/m"))
    rec = choose(catalog, facts)
    pinned = sum(catalog.entry(r).total_size or 0 for r in ("llm", "asr", "tts"))
    assert rec.download_bytes == pinned


def test_every_tier_keeps_multilingual_speech() -> None:
    catalog = load_catalog()
    for tier in catalog.tiers.values():
        asr = catalog.roles["asr"][tier.asr]
        assert asr.multilingual or not asr.downloadable, tier.name


def _manifest() -> dict[str, object]:
    return load_toml(default_manifest_path(), max_bytes=1 << 20, max_depth=8)


def test_a_tier_naming_an_unknown_model_is_refused() -> None:
    data = _manifest()
    tiers = data["tiers"]
    assert isinstance(tiers, dict)
    tiers["gpu-full"] = {**tiers["gpu-full"], "llm": "nonexistent"}
    with pytest.raises(ModelError, match="no llm model 'nonexistent'"):
        parse_catalog(data)


def test_an_english_only_download_in_a_tier_is_refused() -> None:
    data = _manifest()
    asr = data["asr"]
    assert isinstance(asr, dict)
    asr["small"] = {**asr["small"], "multilingual": False}
    with pytest.raises(ModelError, match="English-only"):
        parse_catalog(data)


def test_the_fallback_must_come_last() -> None:
    data = _manifest()
    tiers = data["tiers"]
    assert isinstance(tiers, dict)
    data["tiers"] = {"embedded": tiers["embedded"], "gpu-full": tiers["gpu-full"]}
    with pytest.raises(ModelError, match="last tier"):
        parse_catalog(data)


def test_facts_are_taken_as_the_probe_gives_them() -> None:
    probe = FakeProbe(None, CPU, 15 * GIB, 0)
    facts = measure(probe, Path("/m"))
    assert facts.cores == 1  # a probe that cannot count cores still yields a usable machine
    assert replace(facts, cores=8).cores == 8
