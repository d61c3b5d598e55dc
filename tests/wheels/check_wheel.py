"""Checks a wheel of ./run.sh wheels (or of ./run.sh test's wheel steps) as a user gets it:

    python tests/wheels/check_wheel.py WHEEL x86_64|aarch64

- its platform tag is manylinux_2_28 or older, for that processor, and py3-none (any CPython);
- it carries the package, the manifest, the library for that processor, and nothing outside
  opbridge/ and its dist-info (no header, no CMake package);
- the library needs no versioned glibc symbol newer than 2.28, and no shared library but glibc's;
- the metadata has the package's version, the license (the text, in dist-info/licenses) and the
  README as the description;
- no file holds a path of the build machine (the repository's folder).

Prints what it checked, then "N passed, M failed"; exits 1 if any failed. Needs pyelftools
(auditwheel's dependency, in .venv)."""

from __future__ import annotations

import io
import re
import sys
import zipfile
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

REPO = Path(__file__).resolve().parents[2]
MACHINES = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}
# What glibc's shared libraries are called: the only ones the library may need.
GLIBC_LIBRARIES = re.compile(r"^(libc|libm|libdl|libpthread|librt)\.so\.\d+$|^ld-linux-(x86-64|aarch64)\.so\.\d+$")


def glibc_needs(library: bytes) -> tuple[list[str], list[tuple[int, int]]]:
    """The library's NEEDED entries and the GLIBC_x.y versions its symbols ask for."""
    elf = ELFFile(io.BytesIO(library))
    needed = [tag.needed for tag in elf.get_section_by_name(".dynamic").iter_tags() if tag.entry.d_tag == "DT_NEEDED"]
    versions = []
    for section in elf.iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for _, auxiliaries in section.iter_versions():
                for aux in auxiliaries:
                    if match := re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", aux.name):
                        versions.append((int(match.group(1)), int(match.group(2))))
    return needed, versions


def main(wheel_path: str, processor: str) -> int:
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    wheel = Path(wheel_path)
    checks: list[tuple[str, bool, str]] = []

    def check(what: str, ok: bool, detail: str = "") -> None:
        checks.append((what, bool(ok), detail))

    match = re.fullmatch(rf"opbridge-{re.escape(version)}-py3-none-manylinux_2_(\d+)_{processor}\.whl", wheel.name)
    check("named opbridge-<version>-py3-none-manylinux_2_<n>_<processor>.whl with n <= 28",
          match and int(match.group(1)) <= 28, wheel.name)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        dist_info = f"opbridge-{version}.dist-info/"
        check("only the package and its dist-info", all(n.startswith(("opbridge/", dist_info)) for n in names),
              str([n for n in names if not n.startswith(("opbridge/", dist_info))]))
        for required in ("opbridge/__init__.py", "opbridge/ops.toml", "opbridge/lib/libopbridge_ort.so"):
            check(f"carries {required}", required in names)
        library = archive.read("opbridge/lib/libopbridge_ort.so")
        elf = ELFFile(io.BytesIO(library))
        check(f"the library is built for {processor}", elf["e_machine"] == MACHINES[processor], elf["e_machine"])
        needed, versions = glibc_needs(library)
        check("the library needs glibc's libraries only", needed and all(GLIBC_LIBRARIES.match(n) for n in needed),
              str(needed))
        newest = max(versions) if versions else (0, 0)
        check("the library's symbols need glibc 2.28 or older", newest <= (2, 28), f"GLIBC_{newest[0]}.{newest[1]}")
        metadata = archive.read(dist_info + "METADATA").decode()
        check(f"the metadata's version is {version}", f"\nVersion: {version}\n" in metadata)
        check("the metadata names the license", "\nLicense: Apache-2.0\n" in metadata)
        check("the README is the description", "# opbridge" in metadata and "## Installing" in metadata)
        licenses = [n for n in names if n.startswith(dist_info + "licenses/")]
        check("the license text is in dist-info/licenses",
              any(b"Apache License" in archive.read(n) and b"Version 2.0" in archive.read(n) for n in licenses),
              str(licenses))
        with_paths = [n for n in names if str(REPO).encode() in archive.read(n)]
        check(f"no file holds the build folder's path ({REPO})", not with_paths, str(with_paths))
        check("the wheel says Tag: py3-none-manylinux_2_<n>_<processor>",
              re.search(rf"^Tag: py3-none-manylinux_2_\d+_{processor}$", archive.read(dist_info + "WHEEL").decode(), re.M))
    for what, ok, detail in checks:
        print(f"{'ok    ' if ok else 'FAILED'} {what}" + (f": {detail}" if detail and not ok else
                                                        f" ({detail})" if detail else ""))
    failed = sum(not ok for _, ok, _ in checks)
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
