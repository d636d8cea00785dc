# Sourced by scripts/check and scripts/demo: install what a fresh Debian 12
# (or Ubuntu) machine lacks to build and test skewshim.
#   skewshim_install_deps [all|demo|lab]
# all (the default): everything the tests use, SimGrid included unless
# SKEWSHIM_NO_LAB is set.  demo: only what the demo's real run builds and
# runs (MPICH); lab: only SimGrid, for the demo's lab part.  demo and lab
# together are 116 packages, 152 MB on a minimal Debian 12 against the full
# set's 241 and 246 MB, so that a newcomer's first command stays short.
skewshim_install_deps() {
    pkgs="build-essential autoconf automake libtool pkg-config libyaml-dev \
mpich libmpich-dev python3"
    case "${1:-all}" in
        all)
            pkgs="$pkgs openmpi-bin libopenmpi-dev gfortran python3-mpi4py"
            # skewshim-report's plots (and its test).
            [ "${SKEWSHIM_NO_PLOTS:-0}" = 1 ] || pkgs="$pkgs python3-matplotlib"
            # The performance lab (doc/lab.md) and its CI subset: SimGrid's SMPI.
            [ -z "${SKEWSHIM_NO_LAB:-}" ] && pkgs="$pkgs libsimgrid-dev" ;;
        demo) ;;
        lab) pkgs=libsimgrid-dev ;;
        *) echo "skewshim_install_deps: unknown set '$1' (all, demo or lab)" >&2; return 2 ;;
    esac
    missing=
    for p in $pkgs; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "skewshim: please install:$missing" >&2
        return 1
    fi
    sudo=
    [ "$(id -u)" = 0 ] || sudo=sudo
    echo "skewshim: installing:$missing" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# Configure and build in DIR with MPICC; extra configure arguments follow.
skewshim_build() {
    dir=$1; mpicc=$2; shift 2
    [ -x configure ] || autoreconf -fi >/dev/null 2>&1 || return 1
    mkdir -p "$dir"
    ( cd "$dir" &&
      { [ -f Makefile ] || ../configure --quiet MPICC="$mpicc" "$@" >configure.out 2>&1 || { cat configure.out >&2; exit 1; }; } &&
      make -j"$(nproc 2>/dev/null || echo 2)" >make.out 2>&1 || { tail -40 make.out >&2; exit 1; } )
}
