#!/bin/sh
# Make a RUN layer byte-reproducible: `normalize-layer begin` at the start of a RUN, `normalize-layer
# end` at its end. `end` deletes what apt, dpkg, ldconfig, pip and Python leave that differs from
# build to build (logs, caches, *-old backups, byte-code caches written by tools) and sets the
# modification time of every path the RUN created or changed to SOURCE_DATE_EPOCH (the commit
# time: scripts/build_image.sh and the release workflow pass it), so two builds of one commit
# write the same layer tar.
set -eu
stamp=/tmp/.normalize-layer-begin
case "${1:-}" in
  begin) touch "$stamp" ;;
  end)
    [ -e "$stamp" ] || { echo "normalize-layer: 'begin' was not called in this RUN" >&2; exit 2; }
    rm -rf /var/log/apt /var/log/dpkg.log /var/log/alternatives.log /var/log/bootstrap.log \
      /var/cache/ldconfig/aux-cache /var/cache/debconf/*-old /var/lib/dpkg/*-old \
      /var/lib/apt/lists/* /var/cache/apt/*.bin /root/.cache
    list=$(mktemp)
    find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \) -prune \
      -o -newer "$stamp" -print > "$list"
    rm -f "$stamp"
    echo /tmp >> "$list"
    tr '\n' '\0' < "$list" | xargs -0 -r touch -h -d "@${SOURCE_DATE_EPOCH:?set SOURCE_DATE_EPOCH}"
    rm -f "$list"
    touch -h -d "@${SOURCE_DATE_EPOCH}" /tmp
    ;;
  *) echo "usage: normalize-layer begin|end" >&2; exit 2 ;;
esac
