#!/bin/sh
# Make a RUN layer byte-reproducible: `normalize-layer begin` at the start of a RUN, `normalize-layer
# end` at its end. `end` empties or deletes what apt, dpkg and ldconfig leave that differs from
# build to build (logs, caches, *-old backups, apt lists and downloaded packages, tool caches)
# and sets the modification time of every path the RUN created or changed (inode change time
# after `begin`) to SOURCE_DATE_EPOCH (the commit time: scripts/build_image.sh and the release
# workflow pass it), so two builds of one commit write the same layer tar.
set -eu
stamp=/tmp/.normalize-layer-begin
case "${1:-}" in
  begin) touch "$stamp" ;;
  end)
    [ -e "$stamp" ] || { echo "normalize-layer: 'begin' was not called in this RUN" >&2; exit 2; }
    # Logs and backups that lower layers already hold are emptied, not deleted: a deletion
    # writes a whiteout entry stamped with the build time. What this step alone made goes.
    for f in /var/log/dpkg.log /var/log/alternatives.log /var/log/bootstrap.log /var/log/apt/* \
        /var/cache/ldconfig/aux-cache /var/cache/debconf/*-old /var/lib/dpkg/*-old; do
      if [ -f "$f" ]; then : > "$f"; fi
    done
    rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/apt/archives/*.deb \
      /var/cache/apt/archives/partial/* /root/.cache /run/adduser
    list=$(mktemp)
    find / -xdev \( -path /proc -o -path /sys -o -path /dev \) -prune \
      -o -cnewer "$stamp" -print > "$list"
    rm -f "$stamp"
    tr '\n' '\0' < "$list" | xargs -0 -r touch -h -d "@${SOURCE_DATE_EPOCH:?set SOURCE_DATE_EPOCH}"
    rm -f "$list"
    touch -h -d "@${SOURCE_DATE_EPOCH}" /tmp  # changed again by the removals above
    ;;
  *) echo "usage: normalize-layer begin|end" >&2; exit 2 ;;
esac
