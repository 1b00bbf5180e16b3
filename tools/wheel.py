#!/usr/bin/env python3
"""Builds culeak's wheel: one self-contained manylinux wheel (`make wheel`).

    tools/wheel.py BUILD_DIR OUT_DIR

The package `culeak` holds the programs in the layout `make install` gives a prefix
(bin/culeak, lib/culeak/*.so, share/culeak/...), so culeak finds its shim, bridge and
Python helpers beside itself as it does when installed; `culeak` on PATH and
`python -m culeak` run bin/culeak (_culeak_command.py, beside the package). The header,
the pkg-config file and the man pages go to the environment's prefix (the wheel's
.data/data): include/, lib/pkgconfig/ and share/man/, where `man culeak` finds them
from PATH.

The libraries those ELF files need beyond the manylinux base set (glibc's libraries,
libgcc_s, libstdc++) are copied into culeak.libs/, renamed with a hash of their content
(SONAME and file name, as auditwheel does: libdw.so.1 becomes libdw-1a2b3c4d.so.1) so that
no library of the job's or of LD_LIBRARY_PATH can stand in for them nor they for it, and
every ELF file gets a RUNPATH to that folder relative to $ORIGIN (patchelf). Their license
texts (Debian's /usr/share/doc/PACKAGE/copyright) go beside culeak's LICENSE in the
dist-info's licenses/. The platform tag names the newest GLIBC_ symbol version that any
ELF file in the wheel needs. Python's standard library only; readelf, ldd, patchelf and
dpkg-query are run.
"""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The manylinux base set: libraries every Linux system with glibc has.
BASE = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1",
    "libresolv.so.2", "libanl.so.1", "ld-linux-x86-64.so.2", "libgcc_s.so.1", "libstdc++.so.6",
}

SUMMARY = "A GPU-memory leak debugger for CUDA programs and training jobs"


def fail(msg):
    sys.exit("wheel: " + msg)


def run(*cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail("%s failed: %s" % (" ".join(cmd), r.stderr.strip()))
    return r.stdout


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-dW", path))


def resolved(path):
    """Where the dynamic loader finds each library path needs: {name: file}."""
    found = {}
    for line in run("ldd", path).splitlines():
        m = re.match(r"\s*(\S+) => (\S+) \(", line)
        if m:
            found[m.group(1)] = m.group(2)
        elif "not found" in line:
            fail("%s: %s" % (path, line.strip()))
    return found


def hashed_name(soname, path):
    """libdw.so.1 -> libdw-<8 hex digits of the file's sha256>.so.1"""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:8]
    stem, dot, rest = soname.partition(".so")
    return "%s-%s%s%s" % (stem, digest, dot, rest)


def license_of(path):
    """The copyright file of the Debian package that installed path."""
    real = os.path.realpath(path)
    for candidate in (real, path, re.sub(r"^/usr/lib/", "/lib/", real), re.sub(r"^/lib/", "/usr/lib/", real)):
        r = subprocess.run(["dpkg-query", "-S", candidate], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if r.returncode == 0:
            pkg = r.stdout.split(":")[0].strip()
            text = "/usr/share/doc/%s/copyright" % pkg
            if os.path.exists(text):
                return pkg, text
    fail("no license text found for %s (dpkg-query -S knows no package of it)" % path)


def glibc_needed(path):
    """The newest GLIBC_2.N that path needs, as N."""
    versions = re.findall(r"Name: GLIBC_2\.(\d+)", run("readelf", "-VW", path))
    return max((int(v) for v in versions), default=0)


class Vendor:
    """Copies the libraries that ELF files need beyond BASE into libs_dir, renamed."""

    def __init__(self, libs_dir):
        self.libs_dir = libs_dir
        self.renamed = {}  # soname -> new file name
        self.licenses = {}  # package -> copyright file

    def take(self, path):
        """Vendors what path needs (recursively); returns {old soname: new name} for it."""
        where = resolved(path)
        mine = {}
        for name in needed(path):
            if name in BASE:
                continue
            if name not in self.renamed:
                src = where.get(name)
                if not src:
                    fail("%s needs %s, which ldd does not resolve" % (path, name))
                new = hashed_name(name, src)
                dst = os.path.join(self.libs_dir, new)
                shutil.copyfile(src, dst)
                os.chmod(dst, 0o755)
                self.renamed[name] = new
                pkg, text = license_of(src)
                self.licenses[pkg] = text
                # its own needs first, from where it was found, then it is patched
                deps = self.take(src)
                patch(dst, deps, "$ORIGIN", soname=new)
            mine[name] = self.renamed[name]
        return mine


def patch(path, renames, runpath, soname=None):
    # one change a call: patchelf 0.14 (Debian 12's) mixes up strings given several at once
    if soname:
        run("patchelf", "--set-soname", soname, path)
    for old, new in sorted(renames.items()):
        run("patchelf", "--replace-needed", old, new, path)
    if renames:
        run("patchelf", "--set-rpath", runpath, path)


def read_version():
    with open(os.path.join(ROOT, "VERSION")) as f:
        return f.read().strip()


def stage(build, top):
    """The package's files under top; returns the data files {wheel path: source}."""
    pkg = os.path.join(top, "culeak")

    def put(src, rel, mode=0o644):
        dst = os.path.join(pkg, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
        os.chmod(dst, mode)

    put(os.path.join(ROOT, "python/culeak.py"), "__init__.py")
    put(os.path.join(ROOT, "python/wheel/__main__.py"), "__main__.py")
    put(os.path.join(ROOT, "python/wheel/_culeak_command.py"), "../_culeak_command.py")
    put(os.path.join(build, "culeak"), "bin/culeak", 0o755)
    for lib in ("libculeak.so", "libculeak_unwind.so", "libculeak_torch.so"):
        put(os.path.join(build, lib), "lib/culeak/" + lib, 0o755)
    for py in ("culeak.py", "sitecustomize.py", "culeak_attach.py", "culeak_holders.py",
               "culeak_holders_ask.py"):
        put(os.path.join(ROOT, "python", py), "share/culeak/python/" + py)
    shared = os.path.join(ROOT, "share/culeak")  # shipped data culeak finds beside itself
    if os.path.isdir(shared):
        for dirpath, _, files in os.walk(shared):
            for f in files:
                src = os.path.join(dirpath, f)
                put(src, os.path.join("share/culeak", os.path.relpath(src, shared)))

    data = {"include/culeak.h": os.path.join(ROOT, "include/culeak.h")}
    for f in sorted(os.listdir(os.path.join(ROOT, "man"))):
        m = re.match(r".*\.([1-8])$", f)
        if m:
            data["share/man/man%s/%s" % (m.group(1), f)] = os.path.join(ROOT, "man", f)
    return data


def pc_file(version):
    """culeak.pc for the environment's prefix, wherever that is: relative to the file."""
    with open(os.path.join(ROOT, "include/culeak.pc.in")) as f:
        text = f.read()
    return text.replace("@PREFIX@", "${pcfiledir}/../..").replace("@VERSION@", version)


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    build, out = sys.argv[1], sys.argv[2]
    for tool in ("patchelf", "readelf", "objcopy", "ldd", "dpkg-query"):
        if not shutil.which(tool):
            fail("%s is not installed (tools/packages.deb names the packages: make deps)" % tool)
    version = read_version()
    top = os.path.join(build, "wheel")
    shutil.rmtree(top, ignore_errors=True)
    data = stage(build, top)

    libs = os.path.join(top, "culeak.libs")
    os.makedirs(libs)
    vendor = Vendor(libs)
    pkg = os.path.join(top, "culeak")
    for dirpath, _, files in os.walk(pkg):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            if is_elf(path):
                run("objcopy", "--strip-debug", path)  # culeak's own frames are never shown
                renames = vendor.take(path)
                runpath = "$ORIGIN/" + os.path.relpath(libs, dirpath)
                patch(path, renames, runpath)

    elves = []
    for dirpath, _, files in os.walk(top):
        elves += [os.path.join(dirpath, f) for f in files if is_elf(os.path.join(dirpath, f))]
    glibc = max(glibc_needed(p) for p in elves)
    tag = "py3-none-manylinux_2_%d_x86_64" % glibc
    name = "culeak-%s" % version
    dist_info = name + ".dist-info"
    data_dir = name + ".data/data"

    entries = []  # (wheel path, bytes, mode)
    for dirpath, _, files in os.walk(top):
        for f in files:
            path = os.path.join(dirpath, f)
            with open(path, "rb") as fh:
                entries.append((os.path.relpath(path, top), fh.read(), os.stat(path).st_mode & 0o777))
    for rel, src in data.items():
        with open(src, "rb") as fh:
            entries.append(("%s/%s" % (data_dir, rel), fh.read(), 0o644))
    entries.append(("%s/lib/pkgconfig/culeak.pc" % data_dir, pc_file(version).encode(), 0o644))

    licenses = [("LICENSE", os.path.join(ROOT, "LICENSE"))]
    licenses += [("%s.copyright" % p, c) for p, c in sorted(vendor.licenses.items())]
    for fname, src in licenses:
        with open(src, "rb") as fh:
            entries.append(("%s/licenses/%s" % (dist_info, fname), fh.read(), 0o644))
    metadata = "".join([
        "Metadata-Version: 2.1\n",
        "Name: culeak\n",
        "Version: %s\n" % version,
        "Summary: %s\n" % SUMMARY,
        "License: GPL-3.0-or-later\n",
        "Requires-Python: >=3.8\n",
        "Classifier: License :: OSI Approved :: GNU General Public License v3 or later (GPLv3+)\n",
        "Classifier: Operating System :: POSIX :: Linux\n",
        "Classifier: Environment :: GPU :: NVIDIA CUDA\n",
        "Classifier: Topic :: Software Development :: Debuggers\n",
    ] + ["License-File: licenses/%s\n" % f for f, _ in licenses])
    entries.append(("%s/METADATA" % dist_info, metadata.encode(), 0o644))
    wheel_file = "Wheel-Version: 1.0\nGenerator: culeak tools/wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % tag
    entries.append(("%s/WHEEL" % dist_info, wheel_file.encode(), 0o644))
    entries.append(("%s/entry_points.txt" % dist_info, b"[console_scripts]\nculeak = _culeak_command:main\n", 0o644))
    entries.append(("%s/top_level.txt" % dist_info, b"_culeak_command\nculeak\n", 0o644))

    record = "".join("%s,%s,%d\n" % (rel, record_hash(b), len(b)) for rel, b, _ in entries)
    record += "%s/RECORD,,\n" % dist_info
    entries.append(("%s/RECORD" % dist_info, record.encode(), 0o644))

    os.makedirs(out, exist_ok=True)
    wheel = os.path.join(out, "%s-%s.whl" % (name, tag))
    tmp = wheel + ".tmp"
    # dist-info last, as wheel tools write it; a fixed time stamp: the same build, the same bytes
    entries.sort(key=lambda e: (e[0].startswith(dist_info), e[0].startswith(name + ".data"), e[0]))
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for rel, b, mode in entries:
            info = zipfile.ZipInfo(rel, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b)
    os.replace(tmp, wheel)
    print("%s (%d KiB): %d libraries vendored (%s), needs glibc 2.%d" % (
        wheel, os.path.getsize(wheel) // 1024, len(vendor.renamed), " ".join(sorted(vendor.renamed)), glibc))


if __name__ == "__main__":
    main()
