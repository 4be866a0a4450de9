#!/bin/sh
# CMake compiler launcher (CMAKE_<LANG>_COMPILER_LAUNCHER) for sdists built by pip: pip unpacks
# a source distribution into a random folder (/tmp/pip-install-*/<name>_*) and
# scikit-build-core builds in another (/tmp/tmp*/); both paths would be compiled into the
# binaries (__FILE__ in assertions). Each is mapped to a fixed name, so one source builds to the
# same bytes in any folder.
args=$(printf '%s\n' "$@")
src=$(printf '%s\n' "$args" | grep -o '/tmp/pip-install-[^/]*/[^/ ]*' | head -n1)
bld=$(printf '%s\n' "$args" | grep -o '/tmp/tmp[^/ ]*' | head -n1)
bld_cwd=$(pwd | grep -o '^/tmp/tmp[^/]*')
exec "$@" ${src:+-ffile-prefix-map=$src=/src} ${bld:+-ffile-prefix-map=$bld=/build} \
  ${bld_cwd:+-ffile-prefix-map=$bld_cwd=/build}
