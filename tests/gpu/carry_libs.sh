# Sourced by tests/gpu/mpich.sh and tests/gpu/lab.sh, which carry programs
# built here (Debian 12) to the device machine, where nothing can be fetched.
#
# carry_libs DEST FILE...: copy into DEST every shared library the FILEs
# load (as ldd resolves them under the caller's LD_LIBRARY_PATH), except
# the C library's own: the device machine has a newer one, and ours would
# not run beside its loader.  A library already in DEST is kept.
carry_libs() {
    carry_dest=$1
    shift
    # The list goes through a file: a return inside a pipeline would leave
    # only its subshell.
    carry_list=$(mktemp) || return 1
    for carry_f in "$@"; do ldd "$carry_f"; done |
        awk '$3 ~ /^\// { print $1, $3 }' | sort -u > "$carry_list"
    while read -r carry_name carry_path; do
        case $carry_name in
        libc.so*|libm.so*|libresolv.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) continue ;;
        esac
        [ -e "$carry_dest/$carry_name" ] || cp -L "$carry_path" "$carry_dest/$carry_name" ||
            { rm -f "$carry_list"; return 1; }
    done < "$carry_list"
    rm -f "$carry_list"
}
