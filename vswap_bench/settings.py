"""Every setting a run has, its default and what values it takes: the one place that knows them.

A run's values are the harness settings (lowercase keys; defaults in harness/defaults.conf, which the guest
side shares) and its workload's parameters (UPPERCASE keys of workloads/NAME/workload.conf, whose lowercase
keys override the harness defaults for that workload).  Values stay strings, as the params file and the
guest's spec carry them; checking them is this module's job.

A workload parameter whose default is a whole number takes whole numbers.  Any other is declared in its
workload.conf, or in workloads/lib/values.conf when several workloads take it (one list for each set of
names), by a line KIND KEY = SET | SET ...:
  one-of KEY = A B C          the value is one word of a SET
  some-of KEY = A B C         one or more words of a SET, separated as the SET is (spaces, or commas when
                              the SET is written with commas), none twice
  any-of KEY = A B C          the same, or nothing
A word of a SET is itself, LOW..HIGH (a whole number in that range) or a name with '*' standing for letters,
digits, _ and - (mm/*.o); a value is of one SET only (device, or numbers: 1..1024 | device).
"""
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .qemu import SWAP_DISK_THROTTLE

TOP = Path(__file__).resolve().parent.parent
DEFAULTS_FILE = TOP / "harness" / "defaults.conf"
WORKLOADS_DIR = TOP / "workloads"

BACKENDS = ("disk", "zswap", "zswap-only", "zram", "none")
# The kernels harness/build-kernel.sh builds (make kernel-NAME), by the name a campaign gives them: a variant
# (the tree: baseline, or vswap with the series) and a flavour (the config: guest, or with debug.config, or
# with debug.config and kasan.config or kcsan.config, or kcsan.config and kcsan-strict.config, or with
# lockstat.config), named VARIANT, or VARIANT-FLAVOUR when the flavour is not guest.
KERNEL_BUILDS = {(variant if flavour == "guest" else f"{variant}-{flavour}"): (variant, flavour)
                 for flavour in ("guest", "debug", "kasan", "kcsan", "kcsan-strict", "lockstat")
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
# The thp setting's large folio sizes (mTHP): that size only, always on.
MTHP_SIZES = ("64K",)
# zram has backends of its own: the guest kernels build only CONFIG_ZRAM_BACKEND_LZO (lzo and lzo-rle), and
# zram keeps lzo-rle when it is given another name.
ZRAM_COMPRESSORS = ("lzo", "lzo-rle")
# guest.config sets CONFIG_NR_CPUS to this (tinyconfig leaves 2): a guest never sees more CPUs than that.
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
# The kinds of a value declaration (the module's docstring): the least and the most words a value has.
VALUE_KINDS = {"one-of": (1, 1), "some-of": (1, None), "any-of": (0, None)}
VALUE_KIND_TEXT = {"one-of": "one of", "some-of": "one or more, none twice, of",
                   "any-of": "nothing, or one or more, none twice, of"}
# What '*' stands for in a declared word: what a name is made of, no character a shell or make reads.
WILDCARD_PATTERN = "[A-Za-z0-9_-]+"
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


@dataclass(frozen=True)
class Values:
    """The values a workload parameter takes, as a KIND KEY = SET | SET ... line declares them."""
    kind: str
    sets: tuple  # (separator, words) of each SET; the separator is None for spaces
    origin: str

    def problem(self, value: str):
        """Why VALUE is not of the declaration, or None."""
        least, most = VALUE_KINDS[self.kind]
        for separator, words in self.sets:
            items = value.split(separator) if value else []
            if (least <= len(items) and (most is None or len(items) <= most) and len(set(items)) == len(items)
                    and all(any(_word_takes(word, item) for word in words) for item in items)):
                return None
        sets = " | ".join((separator or " ").join(words) for separator, words in self.sets)
        return f"must be {VALUE_KIND_TEXT[self.kind]}: {sets} ({self.origin})"


def _word_takes(word: str, item: str) -> bool:
    low, dots, high = word.partition("..")
    if dots:
        return whole_number(item, int(low), int(high)) is not None
    return re.fullmatch(WILDCARD_PATTERN.join(map(re.escape, word.split("*"))), item) is not None


def _declared_values(kind: str, declaration: Setting) -> Values:
    """The Values a declaration KIND KEY = SET | SET ... gives (its key and value in DECLARATION)."""
    sets = []
    for text in declaration.value.split("|"):
        separator = "," if "," in text else None
        words = [word.strip() for word in text.split(separator)]
        if not all(words):
            raise UsageError(f"{declaration.origin}: an empty word in the values of {declaration.key}")
        for word in words:
            low, dots, high = word.partition("..")
            if dots and not (WHOLE_PATTERN.fullmatch(low) and WHOLE_PATTERN.fullmatch(high)
                             and len(high) <= MAX_DIGITS and int(low) <= int(high)):
                raise UsageError(f"{declaration.origin}: '{word}' is not a range LOW..HIGH of whole numbers")
        sets.append((separator, tuple(words)))
    return Values(kind, tuple(sets), declaration.origin)


def given_once(given: dict, setting: Setting):
    """GIVEN: where each key was given so far (in one file, or on the command line).  A key given a second
    time is refused: the later value would replace the earlier without a word."""
    if setting.key in given:
        raise UsageError(f"{setting.origin}: {setting.key} is given twice (first at {given[setting.key]})")
    given[setting.key] = setting.origin


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
    """KEY = VALUE (VALUE may hold spaces, or be in double quotes) as a Setting.  A '#' is refused: a comment is
    a line of its own, and no value takes a '#', so one after a value can only be a comment that would become
    part of the value."""
    if "#" in text:
        raise UsageError(f"{origin}: '#' in '{text}': a comment is a line of its own, starting with '#'")
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
    """The KEY = VALUE lines of PATH (a params file, defaults.conf), each key once."""
    settings, declared = _read_declarations(path)
    if declared:
        raise UsageError(f"{next(iter(declared.values())).origin}: values are declared in a workload.conf")
    return settings


def _read_declarations(path: Path) -> tuple[list[Setting], dict[str, Values]]:
    """The settings and the value declarations (KIND KEY = ...) of a key=value file; a key is set once and
    declared once."""
    settings, declared, given = [], {}, ({}, {})
    for number, text in read_key_values(path):
        origin = f"{display_path(path)}:{number}"
        kind, _, rest = text.partition(" ")
        is_declaration = kind in VALUE_KINDS
        setting = split_setting(rest if is_declaration else text, origin)
        given_once(given[is_declaration], setting)
        if is_declaration:
            declared[setting.key] = _declared_values(kind, setting)
        else:
            settings.append(setting)
    return settings, declared


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
def workload_conf(workload: str) -> tuple[dict[str, Setting], dict[str, Values]]:
    """The harness defaults with the workload's workload.conf over them, and the values each of its
    parameters that is not a whole number takes (workload.conf's declarations and values.conf's)."""
    if workload not in workload_names():
        raise UsageError(f"unknown workload '{workload}' (workloads: {' '.join(workload_names())})")
    written, declared = _read_declarations(WORKLOADS_DIR / workload / "workload.conf")
    shared_settings, shared = _read_declarations(WORKLOADS_DIR / "lib" / "values.conf")
    if shared_settings:
        raise UsageError(f"{shared_settings[0].origin}: values.conf declares values; a default is a workload's")
    defaults = dict(harness_defaults())
    for setting in written:
        if is_setting_key(setting.key) and setting.key not in defaults:
            raise UsageError(f"{setting.origin}: unknown setting '{setting.key}'")
        defaults[setting.key] = setting
    for key, values in declared.items():
        if key in shared:
            raise UsageError(f"{values.origin}: the values of {key} are declared in {shared[key].origin}, "
                             f"for every workload that has it")
        if is_setting_key(key) or key not in defaults:
            raise UsageError(f"{values.origin}: {key} is not a parameter of workload {workload}")
    declared |= {key: values for key, values in shared.items() if key in defaults}
    for key, default in defaults.items():
        if key not in declared and not is_setting_key(key) and not WHOLE_PATTERN.fullmatch(default.value):
            raise UsageError(f"{default.origin}: {key} is not a whole number, and no line declares the values "
                             f"it takes (one-of, some-of or any-of {key} = ...)")
        problem = key in declared and declared[key].problem(default.value)
        if problem:
            raise UsageError(f"{default.origin}: {key}={default.value!r} {problem}")
    return defaults, declared


def workload_defaults(workload: str) -> dict[str, Setting]:
    return workload_conf(workload)[0]


def workload_values(workload: str) -> dict[str, Values]:
    return workload_conf(workload)[1]


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
        if word.startswith("brd."):
            return (f"has '{word}': the runner sizes the RAM disk from swap_mb when swap_disk=brd, and a size "
                    "given here would contradict the one recorded")
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
    "swap_disk": _one_of("virtio", "ram", "brd"),
    "swap_disk_profile": _one_of("none", *SWAP_DISK_THROTTLE),
    "thp": _one_of("kernel", "never", "madvise", "always", *MTHP_SIZES),
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


def check_value(workload: str, key: str, value: str):
    """Why VALUE is wrong for KEY (a harness setting, or a parameter of WORKLOAD), or None.  A workload
    parameter takes what its declaration says, or else whole numbers, as its default is one: its run script
    does arithmetic with it."""
    if is_setting_key(key):
        return CHECKS[key](value)
    defaults, declared = workload_conf(workload)
    if key in declared:
        return declared[key].problem(value)
    problem = whole_number_problem(value, 0, MAX_WORKLOAD_NUMBER)
    return problem and f"{problem}, as its default {defaults[key].value} ({defaults[key].origin})"


def check_setting(workload: str, key: str, setting: Setting):
    """Refuses SETTING's value for KEY (its key without a scope) in WORKLOAD's runs, naming where it was set."""
    problem = check_value(workload, key, setting.value)
    if problem:
        raise UsageError(f"{setting.origin}: {key}={setting.value!r} {problem}")
