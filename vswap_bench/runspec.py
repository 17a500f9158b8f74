"""RunSpec: one run with every setting resolved, checked as a whole, and the names derived from it."""
import hashlib
from dataclasses import dataclass
from pathlib import Path

from .settings import (CHECKS, PLAN_KEYS, ZRAM_COMPRESSORS, Setting, UsageError, aa_label, check_setting,
                       harness_defaults, is_setting_key, kernel_build, read_settings, size_bytes,
                       workload_defaults)

# Settings added after campaigns were first planned, at the value that does what every run did before they
# existed.  They stay out of the configuration hash at that value, so a campaign planned before them
# resumes under the same run ids (--resume) instead of planning every run anew.
HASH_NEUTRAL = {("pressure", "cgroup"), ("on_unsupported", "skip"), ("verify_poll", "0"), ("vswap_slots", "0"),
                ("kernel_args", ""), ("fail_slab_in", ""), ("fail_slab_percent", "50"),
                ("zswap_writeback", "1"), ("VMAS", "0"), ("VMA_PAGES", "4"),
                ("profile", "none"), ("swap_disk", "virtio"), ("IN_MEMORY", "0"),
                ("aslr", "1"), ("thp", "kernel"), ("swap_disk_profile", "none")}
# Settings that tell apart runs of one configuration, not configurations (the A/A label among them).
NOT_CONFIGURATION = ("kernel",) + PLAN_KEYS


@dataclass(frozen=True)
class RunSpec:
    """Every resolved setting of one run as key -> Setting (value and where it came from)."""
    settings: dict

    def __getitem__(self, key: str) -> str:
        return self.settings[key].value

    @property
    def values(self) -> dict[str, str]:
        return {key: setting.value for key, setting in self.settings.items()}

    @property
    def workload_params(self) -> dict[str, str]:
        return {key: value for key, value in self.values.items() if not is_setting_key(key)}

    @property
    def harness_settings(self) -> dict[str, str]:
        return {key: value for key, value in self.values.items() if is_setting_key(key)}

    @property
    def is_warmup(self) -> bool:
        return self["warmup"] == "1"

    @property
    def label(self) -> str:
        """The kernel label the run is counted under: the kernel's name, or its A/A label."""
        return self["label"] or self["kernel"]

    @property
    def config_hash(self) -> str:
        """The same on every kernel, repetition and warm-up of one configuration; any other setting
        (vcpus and guest_mem_mb included) changes it; the A/A label does not.  The hash of the sorted
        key=value lines, as the shell planner made it, so that run ids of campaigns planned before stay
        valid."""
        lines = sorted(f"{key}={value}\n" for key, value in self.values.items()
                       if key not in NOT_CONFIGURATION and (key, value) not in HASH_NEUTRAL)
        return hashlib.sha256("".join(lines).encode()).hexdigest()[:16]

    @property
    def run_id(self) -> str:
        tag = f"warmup{self['repetition']}" if self.is_warmup else f"r{self['repetition']}"
        return f"{self['workload']}-{self['backend']}-{self.label}-{tag}-{self.config_hash[:8]}"

    def params_text(self) -> str:
        """The params file: every value, one key=value a line, sorted."""
        return "".join(sorted(f"{key}={value}\n" for key, value in self.values.items()))

    def check(self):
        """Raises UsageError naming the first wrong value and where it was set."""
        for key, setting in self.settings.items():
            check_setting(self["workload"], key, setting)
        label = self.settings["label"]
        if label.value not in ("", self["kernel"], aa_label(self["kernel"])):
            raise UsageError(f"{label.origin}: label={label.value!r} is neither kernel {self['kernel']}'s name "
                             f"nor its A/A label {aa_label(self['kernel'])}")
        compressor = self.settings["zswap_compressor"]
        if self["backend"] == "zram" and compressor.value not in ZRAM_COMPRESSORS:
            raise UsageError(f"{compressor.origin}: backend=zram compresses with zswap_compressor, and the guest "
                             f"kernels' zram has only {' '.join(ZRAM_COMPRESSORS)}, not {compressor.value}")
        fail_in, fail_percent = self.settings["fail_slab_in"], self.settings["fail_slab_percent"]
        if fail_in.value and kernel_build(self["kernel"])[1] == "guest":
            raise UsageError(f"{fail_in.origin}: fail_slab_in needs a debug kernel (failslab and its call-stack "
                             f"filter): {self['kernel']}-debug or {self['kernel']}-kasan, not {self['kernel']}")
        if not fail_in.value and fail_percent.value != harness_defaults()["fail_slab_percent"].value:
            raise UsageError(f"{fail_percent.origin}: fail_slab_percent={fail_percent.value} without "
                             f"fail_slab_in fails nothing")
        memory_max = self.settings["memory_max"]
        # Under global pressure memory_max is what the guest leaves free for the workload
        # (harness/defaults.conf): it must be a size.
        if self["pressure"] == "global" and memory_max.value == "max":
            raise UsageError(f"{memory_max.origin}: pressure=global needs memory_max as a size "
                             f"(the memory left to the workload), not 'max'")
        # The RAM disk's pages come out of the guest's memory (the agent's watch_ram_disk): under global
        # pressure that is the memory the workload swaps to make room in, and a page swapped out frees none.
        in_guest_memory = self["swap_disk"] in ("ram", "brd")
        if self["pressure"] == "global" and in_guest_memory and self["backend"] in ("disk", "zswap"):
            raise UsageError(f"{self.settings['swap_disk'].origin}: swap_disk={self['swap_disk']} takes each page "
                             f"it stores from the memory pressure=global leaves the workload: use swap_disk=virtio")
        profile = self.settings["swap_disk_profile"]
        if profile.value != "none" and self["swap_disk"] != "virtio":
            raise UsageError(f"{profile.origin}: swap_disk_profile={profile.value} throttles the virtio swap disk, "
                             f"and swap_disk={self['swap_disk']} is not one")
        if memory_max.value != "max" and size_bytes(memory_max.value) >= int(self["guest_mem_mb"]) << 20:
            raise UsageError(f"{memory_max.origin}: memory_max={memory_max.value} is not below the guest's "
                             f"memory (guest_mem_mb={self['guest_mem_mb']})")


def resolve(layers: list[list[Setting]], workload: Setting) -> RunSpec:
    """The workload's defaults with each layer of settings over them in turn; unknown keys are refused."""
    problem = CHECKS["workload"](workload.value)
    if problem:
        raise UsageError(f"{workload.origin}: workload={workload.value!r} {problem}")
    settings = dict(workload_defaults(workload.value))
    settings["workload"] = workload
    for layer in layers:
        for setting in layer:
            if setting.key not in settings:
                what = "setting" if is_setting_key(setting.key) else "parameter"
                known = " ".join(sorted(key for key in settings if is_setting_key(key) == is_setting_key(setting.key)))
                raise UsageError(f"{setting.origin}: unknown {what} '{setting.key}' for workload {workload.value} "
                                 f"(known: {known})")
            settings[setting.key] = setting
    return RunSpec(settings)


def read_params(path: Path) -> RunSpec:
    """A params file as the planner wrote it, over the defaults: a file written before a setting existed
    reads with that setting's default."""
    written = read_settings(path)
    workload = next((setting for setting in written if setting.key == "workload"), None)
    if workload is None:
        raise UsageError(f"{path}: no workload= line")
    spec = resolve([written], workload)
    spec.check()
    return spec
