"""Every setting a run has, its default and what values it takes: the one place that knows them.

A run's values are the harness settings (lowercase keys; defaults in harness/defaults.conf, which the guest
side shares) and its workload's parameters (UPPERCASE keys of workloads/NAME/workload.conf, whose lowercase
keys override the harness defaults for that workload).  Values stay strings, as the params file and the
guest's spec carry them; checking them is this module's job.
"""
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
DEFAULTS_FILE = TOP / "harness" / "defaults.conf"
WORKLOADS_DIR = TOP / "workloads"

BACKENDS = ("disk", "zswap", "zswap-only", "zram", "none")
# The kernels harness/build-kernel.sh builds (make kernel-NAME), by the name a campaign gives them: a variant
# (the tree: baseline, or vswap with the series) and a flavour (the config: guest, or with debug.config, or
# with debug.config and kasan.config or kcsan.config, or kcsan.config and kcsan-strict.config), named
# VARIANT, or VARIANT-FLAVOUR when the flavour is not guest.
KERNEL_BUILDS = {(variant if flavour == "guest" else f"{variant}-{flavour}"): (variant, flavour)
                 for flavour in ("guest", "debug", "kasan", "kcsan", "kcsan-strict")
                 for variant in ("baseline", "vswap")}
KERNEL_VARIANTS = tuple(KERNEL_BUILDS)
# A campaign's A/A group (its 'aa = KERNEL' line) runs the build KERNEL a second time under this label, so
# the analysis finds two labels with one kernel_id: an A/A pair (analysis/pairing.py).  The rule is here
# only: the planner names the runs with it, RunSpec.check accepts no other label.
AA_SUFFIX = "-aa"


def aa_label(kernel: str) -> str:
    """The label of KERNEL's A/A runs: baseline -> baseline-aa."""
    return f"{kernel}{AA_SUFFIX}"


# Every label a run can carry: a kernel's own name or its A/A label.
KERNEL_LABELS = KERNEL_VARIANTS + tuple(aa_label(kernel) for kernel in KERNEL_VARIANTS)
# The compressors the guest kernels have (kernel-patches/configs/guest.config: CRYPTO_LZO gives lzo and
# lzo-rle, CRYPTO_LZ4 lz4); zram takes the same names.
COMPRESSORS = ("lzo", "lzo-rle", "lz4")
# zram has backends of its own: the guest kernels build only CONFIG_ZRAM_BACKEND_LZO (lzo and lzo-rle), and
# zram keeps lzo-rle when it is given another name.
ZRAM_COMPRESSORS = ("lzo", "lzo-rle")
# tinyconfig with SMP leaves CONFIG_NR_CPUS at its x86_64 default: a guest never sees more CPUs than this.
MAX_VCPUS = 64
# Below this a memory.max OOM-kills the workload's own shell before the workload has started.
MIN_MEMORY_MAX = 8 << 20
# Boot, workload and collection all come out of the timeout (runner.py keeps a tenth for the first
# and last, at least 60 s).
MIN_TIMEOUT_S = 90
# The upper bounds: what this harness can run, so that a digit too many is refused by the planner rather
# than planned for ever or failed by the runner.
# QEMU takes the guest's memory from the host's: paper.conf's 24 GiB guest is the largest a campaign has,
# and 256 GiB is past the hosts this harness runs on.
MAX_GUEST_MEM_MB = 256 << 10
# The swap disk is a sparse file on the host (its size costs only what the guest writes), and the swap
# header counts an area's pages in 32 bits: mkswap makes no area larger than 16 TiB.
MAX_SWAP_MB = 16 << 20
# Every size (memory_max, swap_max, zswap_max, zram_size) is of guest memory or of a swap area.
MAX_SIZE = MAX_SWAP_MB << 20
# A timeout is also how long a hung guest holds the host; the longest a campaign gives is an hour (paper.conf).
MAX_TIMEOUT_S = 24 * 3600
# A slot holds a 4 KiB page: more slots than the largest swap area has pages limit nothing.
MAX_VSWAP_SLOTS = MAX_SWAP_MB << 8
# A workload's whole-number parameters go to its run script's shell arithmetic and to its C program's
# parsers (workloads/lib/vbutil.c), which bound them further: a C int holds every one.
MAX_WORKLOAD_NUMBER = 2**31 - 1
# The runs of one plan: standard's 72 take 75 min on this 2-core host, about a minute each, so 10000 are a
# week of one host, and the largest campaign shipped has 122.  A plan of more is a digit too many.
MAX_RUNS = 10_000
# Set per run by the planner, never by a campaign: the repetition number, whether it is a warm-up and the
# kernel label of an A/A run ("" for the kernel's own name).
PLAN_KEYS = ("repetition", "warmup", "label")
KEY_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# ASCII digits without a leading zero: str.isdigit() takes '²' and int() reads '３' as 3, and strtoul
# (workloads/lib/vbutil.c) and the guest's shell arithmetic read 010 as 8.
WHOLE_PATTERN = re.compile(r"0|[1-9][0-9]*")
SIZE_PATTERN = re.compile(rf"({WHOLE_PATTERN.pattern})([KkMmGg]?)")
# Longer numbers are past every bound above; int() refuses to read more than 4300 digits.
MAX_DIGITS = 20
SIZE_UNITS = {"": 0, "k": 10, "m": 20, "g": 30}


class UsageError(Exception):
    """Bad input; the message names where it came from (FILE:LINE or the command line) and what is wrong."""


def kernel_build(name: str) -> tuple[str, str]:
    """The (variant, flavour) of the kernel NAME (harness/build-kernel.sh builds it from them)."""
    if name not in KERNEL_BUILDS:
        raise UsageError(f"unknown kernel '{name}': one of {', '.join(KERNEL_VARIANTS)}")
    return KERNEL_BUILDS[name]


@dataclass(frozen=True)
class Setting:
    """One key=value as written somewhere, with where (FILE:LINE, "command line", ...) for error messages."""
    key: str
    value: str
    origin: str


def read_key_values(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of the lines of a key=value file that say something: CRLF or LF, blank lines and
    #-comments left out, surrounding spaces removed."""
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {path}: {error}") from None
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if line and not line.startswith("#"):
            lines.append((number, line))
    return lines


def split_setting(text: str, origin: str) -> Setting:
    """KEY = VALUE (VALUE may hold spaces, or be in double quotes) as a Setting."""
    key, equals, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not equals:
        raise UsageError(f"{origin}: '{text}' is not KEY = VALUE")
    if not key:
        raise UsageError(f"{origin}: '{text}' has no key before '='")
    if not KEY_PATTERN.fullmatch(key):
        raise UsageError(f"{origin}: '{key}' is not a key (letters, digits, _ . -)")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return Setting(key, value, origin)


def read_settings(path: Path) -> list[Setting]:
    return [split_setting(text, f"{display_path(path)}:{number}") for number, text in read_key_values(path)]


def display_path(path: Path) -> str:
    """The path relative to the checkout when it is inside it: shorter messages."""
    try:
        return str(Path(path).resolve().relative_to(TOP))
    except ValueError:
        return str(path)


@cache
def harness_defaults() -> dict[str, Setting]:
    return {setting.key: setting for setting in read_settings(DEFAULTS_FILE)}


def workload_names() -> list[str]:
    return sorted(conf.parent.name for conf in WORKLOADS_DIR.glob("*/workload.conf"))


@cache
def workload_defaults(workload: str) -> dict[str, Setting]:
    """The harness defaults with the workload's workload.conf over them."""
    conf = WORKLOADS_DIR / workload / "workload.conf"
    if workload not in workload_names():
        raise UsageError(f"unknown workload '{workload}' (workloads: {' '.join(workload_names())})")
    values = dict(harness_defaults())
    for setting in read_settings(conf):
        if is_setting_key(setting.key) and setting.key not in values:
            raise UsageError(f"{setting.origin}: unknown setting '{setting.key}'")
        values[setting.key] = setting
    return values


def is_setting_key(key: str) -> bool:
    """Lowercase keys are harness settings, UPPERCASE ones a workload's parameters."""
    return any(char.islower() for char in key)


def whole_number(text: str, low: int, high: int):
    """TEXT as a whole number from LOW to HIGH; None when it is not one."""
    if not WHOLE_PATTERN.fullmatch(text) or len(text) > MAX_DIGITS or not low <= int(text) <= high:
        return None
    return int(text)


def whole_number_problem(text: str, low: int, high: int):
    """Why TEXT is not a whole number from LOW to HIGH, or None."""
    if whole_number(text, low, high) is None:
        return f"must be a whole number from {low} to {high} (ASCII digits, no leading zero)"
    return None


def size_bytes(text: str):
    """64M -> 67108864; None when TEXT is not a size or is larger than MAX_SIZE."""
    match = SIZE_PATTERN.fullmatch(text)
    if not match or len(match[1]) > MAX_DIGITS:
        return None
    size = int(match[1]) << SIZE_UNITS[match[2].lower()]
    return size if size <= MAX_SIZE else None


def _whole(low: int, high: int):
    return lambda value: whole_number_problem(value, low, high)


def _one_of(*choices):
    def check(value: str):
        return None if value in choices else f"must be one of: {' '.join(choices)}"
    return check


def _size(minimum: int, *, may_be_max: bool, may_be_empty: bool = False):
    def check(value: str):
        if (may_be_max and value == "max") or (may_be_empty and value == ""):
            return None
        size = size_bytes(value)
        if size is None:
            return (f"must be a size like 64M, at most {MAX_SIZE >> 30}G (ASCII digits, no leading zero)"
                    + (", or max" if may_be_max else ""))
        if size < minimum:
            return f"must be at least {minimum >> 20}M" if minimum >= 1 << 20 else f"must be at least {minimum}"
        return None
    return check


# A kernel parameter as kernel_args takes it: a module's, MODULE.PARAM=VALUE, of characters that need no
# quoting on the kernel's command line or in QEMU's -append.  The kernel hands a word it does not know to
# init, the guest's agent, as an argument (a bare word) or an environment variable (NAME=VALUE), and some
# undotted ones change how the guest boots or what its console shows (ro, quiet); an unknown dotted one it
# drops with a warning.
KERNEL_ARG_PATTERN = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+=[A-Za-z0-9_.,:/+-]*")


def _kernel_args(value: str):
    for word in value.split():
        if not KERNEL_ARG_PATTERN.fullmatch(word):
            return (f"has '{word}', which is not a module parameter MODULE.PARAM=VALUE (letters, digits and "
                    "_ . , : / + -); other words reach the guest's init or change how it boots")
    return None


def _kernel_function(value: str):
    if value and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        return "is not the name of a kernel function"
    return None


def _workload(value: str):
    return None if value in workload_names() else f"is not a workload (one of: {' '.join(workload_names())})"


# What each harness setting takes: a function returning why a value is wrong, or None.
CHECKS = {
    "kernel": _one_of(*KERNEL_VARIANTS),
    "workload": _workload,
    "backend": _one_of(*BACKENDS),
    "on_unsupported": _one_of("skip", "run"),
    "memory_max": _size(MIN_MEMORY_MAX, may_be_max=True),
    "pressure": _one_of("cgroup", "global"),
    "swap_max": _size(0, may_be_max=True, may_be_empty=True),
    "zswap_max": _size(0, may_be_max=True, may_be_empty=True),
    "zswap_writeback": _one_of("0", "1"),
    "vcpus": _whole(1, MAX_VCPUS),
    "guest_mem_mb": _whole(1, MAX_GUEST_MEM_MB),
    "swap_mb": _whole(1, MAX_SWAP_MB),
    "timing": _one_of("realtime", "icount"),
    "profile": _one_of("none", "insn"),
    "zswap_compressor": _one_of(*COMPRESSORS),
    "zswap_pool_percent": _whole(1, 100),
    "zram_size": _size(1, may_be_max=False),
    "rotational": _one_of("0", "1"),
    "swap_disk": _one_of("virtio", "ram"),
    "aslr": _one_of("0", "1"),
    "timeout": _whole(MIN_TIMEOUT_S, MAX_TIMEOUT_S),
    "verify_poll": _whole(0, MAX_TIMEOUT_S),
    "vswap_slots": _whole(0, MAX_VSWAP_SLOTS),
    "kernel_args": _kernel_args,
    "fail_slab_in": _kernel_function,
    "fail_slab_percent": _whole(1, 100),
    "repetition": _whole(1, MAX_RUNS),
    "warmup": _one_of("0", "1"),
    "label": _one_of("", *KERNEL_LABELS),
}


def check_value(key: str, value: str, default: Setting):
    """Why VALUE is wrong for KEY, or None.  A workload parameter whose default is a whole number must be
    one too: its run script does arithmetic with it."""
    if is_setting_key(key):
        return CHECKS[key](value)
    if WHOLE_PATTERN.fullmatch(default.value):
        problem = whole_number_problem(value, 0, MAX_WORKLOAD_NUMBER)
        return problem and f"{problem}, as its default {default.value} ({default.origin})"
    return None
